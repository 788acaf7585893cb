"""A fake OpenAI-compatible chat-completions server for the judge runner's
tests: http.server in a thread on 127.0.0.1 (a port the OS picks).

It checks each request's shape (path, Authorization, model, messages, the
official prompt, the image data URL) and records problems instead of
answering 200, answers ``[[A]]``/``[[B]]`` by a rule the test gives, and can
be told to misbehave: 429 with Retry-After, 500, a dropped connection, a slow
answer (for client timeouts), a 401 echoing the key, or any of those for
every request from now on. It counts requests per (item, order) and the most
requests it ever had in flight at once.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PROMPT_PARTS = re.compile(
    r"\[User Question\]\n(?P<question>.*)\n\n"
    r"\[The Start of Assistant A's Answer\]\n(?P<a>.*)\n\[The End of Assistant A's Answer\]\n\n"
    r"\[The Start of Assistant B's Answer\]\n(?P<b>.*)\n\[The End of Assistant B's Answer\]\Z",
    re.S,
)
PROMPT_START = "Please act as an impartial judge and evaluate the quality of the responses"


class FakeJudge:
    def __init__(self, *, api_key: str, model: str, records: list[dict]):
        self.api_key = api_key
        self.model = model
        # Output text -> (ID, "Output1"/"Output2", Better): identifies the item
        # and the order from assistant A's answer.
        self.by_text = {}
        for r in records:
            for slot in ("Output1", "Output2"):
                self.by_text[r[slot]] = (r["ID"], slot, r["Better"])
        self.decide: Callable[[str, str, str], str] = self.correct  # (ID, order, right) -> A/B
        # Text after the verdict, e.g. a stated confidence: (ID, order) -> text.
        self.after_verdict: Callable[[str, str], str] = lambda external_id, order: ""
        self.lock = threading.Lock()
        self.requests: Counter = Counter()  # (ID, order) -> requests received
        self.answered: Counter = Counter()  # (ID, order) -> 200 answers sent
        self.problems: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.temperatures: set = set()  # each request's temperature ("absent": not sent)
        self.plan: dict[str, list[str]] = {}  # ID -> actions for its next requests
        self.always: str | None = None  # action for every request
        self.answer_delay = 0.0  # seconds before every 200 answer
        self.slow_seconds = 1.5  # a "slow" answer: longer than the tests' client timeout
        self.times: dict[tuple[str, str], list[float]] = {}
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.server.block_on_close = False
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    # Verdict rules -------------------------------------------------------------------
    @staticmethod
    def correct(external_id: str, order: str, right: str) -> str:
        return right

    @staticmethod
    def always_a(external_id: str, order: str, right: str) -> str:
        return "A"

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeJudge:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output quiet
                pass

            def do_POST(self):
                with fake.lock:
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                self.counted = True
                try:
                    fake._serve(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)
                finally:
                    self._answered()

            def send_response(self, *args, **kwargs):
                # In flight until the answer starts: once it is sent the client
                # may send its next request before this thread gets further.
                self._answered()
                super().send_response(*args, **kwargs)

            def _answered(self):
                if getattr(self, "counted", False):
                    self.counted = False
                    with fake.lock:
                        fake.in_flight -= 1

        return Handler

    def _problem(self, message: str) -> None:
        with self.lock:
            self.problems.append(message)

    def _serve(self, h: BaseHTTPRequestHandler) -> None:
        body = h.rfile.read(int(h.headers.get("Content-Length", 0)))
        if h.path != "/v1/chat/completions":
            self._problem(f"path {h.path}")
            return _send(h, 404, {"error": {"message": "no such path"}})
        try:
            payload = json.loads(body)
            ext_id, order, right = self._check(payload)
        except (ValueError, KeyError, TypeError, AssertionError) as exc:
            self._problem(f"bad request: {exc!r}")
            return _send(h, 400, {"error": {"message": str(exc)}})
        with self.lock:
            self.requests[(ext_id, order)] += 1
            self.times.setdefault((ext_id, order), []).append(time.monotonic())
            action = self.always or (self.plan.get(ext_id) or [None]).pop(0)
            if ext_id in self.plan and not self.plan[ext_id]:
                del self.plan[ext_id]
        if h.headers.get("Authorization") != f"Bearer {self.api_key}":
            action = "unauthorised"
        if action == "429":
            return _send(h, 429, {"error": {"message": "slow down"}}, {"Retry-After": "1"})
        if action == "500":
            return _send(h, 500, {"error": {"message": "boom"}})
        if action == "drop":
            h.close_connection = True
            h.connection.shutdown(2)  # socket.SHUT_RDWR: no response at all
            return None
        if action == "slow":
            time.sleep(self.slow_seconds)
        if action == "unauthorised":
            got = h.headers.get("Authorization", "")
            return _send(h, 401, {"error": {"message": f"Incorrect API key provided: {got}"}})
        if action == "redirect":
            return _send(h, 307, {}, {"Location": "/elsewhere/chat/completions"})
        if action == "bad_request":
            return _send(h, 400, {"error": {"message": "image too large"}})
        if self.answer_delay:
            time.sleep(self.answer_delay)
        verdict = self.decide(ext_id, order, right)
        text = f"Both answers were read carefully; {ext_id}. Verdict: [[{verdict}]]"
        text += self.after_verdict(ext_id, order)
        with self.lock:
            self.answered[(ext_id, order)] += 1
        return _send(
            h,
            200,
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "model": self.model,
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": f"  {text}\n"}}
                ],
            },
        )

    def _check(self, payload: dict) -> tuple[str, str, str]:
        assert payload["model"] == self.model, f"model {payload['model']!r}"
        self.temperatures.add(payload.get("temperature", "absent"))
        if "temperature" in payload:  # sent only when the endpoint sets one
            assert isinstance(payload["temperature"], int | float), "temperature"
        assert isinstance(payload["max_tokens"], int), "max_tokens"
        (message,) = payload["messages"]
        assert message["role"] == "user", "role"
        text_part, image_part = message["content"]
        assert text_part["type"] == "text", "first part is not text"
        assert image_part["type"] == "image_url", "second part is not image_url"
        url = image_part["image_url"]["url"]
        prefix = "data:image/png;base64,"
        assert url.startswith(prefix), f"image URL {url[:40]!r}"
        assert base64.b64decode(url[len(prefix) :])[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
        prompt = text_part["text"]
        assert prompt.startswith(PROMPT_START), "not the benchmark's judge prompt"
        parts = PROMPT_PARTS.search(prompt)
        assert parts is not None, "prompt layout"
        ext_id, slot_a, better = self.by_text[parts["a"]]
        ext_b, slot_b, _ = self.by_text[parts["b"]]
        assert ext_id == ext_b and slot_a != slot_b, "answers of different items"
        order = "original" if slot_a == "Output1" else "swapped"
        right = "A" if better == slot_a else "B"
        return ext_id, order, right


def _send(h: BaseHTTPRequestHandler, status: int, payload: dict, headers=None) -> None:
    data = json.dumps(payload).encode()
    h.send_response(status)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", str(len(data)))
    for k, v in (headers or {}).items():
        h.send_header(k, v)
    h.end_headers()
    h.wfile.write(data)
