"""Asking an OpenAI-compatible chat-completions endpoint to judge one pair.
No Django import: the runner (curation/judge_runs.py) feeds it release
records and stores what comes back.

The prompt, the message layout (text part first, then the image as a base64
data URL) and ``max_tokens=1024`` as the default follow the benchmark's own
judge script, facebookresearch/multimodal_rewardbench
``scripts/1_run_model_as_judge_gpt4o.py`` (``judge_prompt`` and
``prepare_judge_example``): assistant A is ``Output1``, assistant B is
``Output2``, and the verdict is ``[[A]]`` / ``[[B]]``, which
``curation.scoring`` reads exactly as ``scripts/2_get_accuracy.py`` does.
The swapped pass fills A with ``Output2`` and B with ``Output1``.

The API key only ever goes into the ``Authorization`` header. Error texts
that leave this module pass through ``redact`` first, because some servers
echo the key they refused.
"""

from __future__ import annotations

import base64
import email.utils
import http.client
import json
import mimetypes
import random
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Verbatim from facebookresearch/multimodal_rewardbench,
# scripts/1_run_model_as_judge_gpt4o.py (`judge_prompt`); the "\n" escapes are
# newlines there too (a plain, not raw, triple-quoted string).
JUDGE_PROMPT = (
    "Please act as an impartial judge and evaluate the quality of the responses provided by "
    "two AI assistants to the user question displayed below. You should choose the assistant "
    "that follows the user's instructions and answers the user's question better. Your "
    "evaluation should consider factors such as the helpfulness, relevance, accuracy, depth, "
    "creativity, and level of detail of their responses. Begin your evaluation by comparing the "
    "two responses and provide a short explanation. Avoid any position biases and ensure that "
    "the order in which the responses were presented does not influence your decision. Do not "
    "allow the length of the responses to influence your evaluation. Do not favor certain names "
    "of the assistants. Be as objective as possible. After providing your explanation, output "
    'your final verdict by strictly following this format: "[[A]]" if assistant A is better, '
    '"[[B]]" if assistant B is better.\n\n'
    "[User Question]\n{question}\n\n"
    "[The Start of Assistant A's Answer]\n{answer_a}\n[The End of Assistant A's Answer]\n\n"
    "[The Start of Assistant B's Answer]\n{answer_b}\n[The End of Assistant B's Answer]"
)

# What the official script writes when every attempt failed: a text without a
# verdict, so the scorer gives the line its random fallback.
OFFICIAL_FAILURE_OUTPUT = "None"

# Statuses worth another attempt: rate limiting, request timeout, server errors.
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
# Statuses that say the endpoint itself is misconfigured (wrong key, URL or
# model): every item would fail the same way, so the whole run stops.
# Redirects are not followed (urllib would forward the Authorization header to
# wherever they point) and count as a wrong base URL.
FATAL_STATUSES = frozenset({301, 302, 303, 307, 308, 401, 403, 404, 405})
MAX_ERROR_CHARS = 500


class FatalEndpointError(Exception):
    """The endpoint refuses every request (bad key, URL or model)."""


class Stopped(Exception):
    """The run was cancelled while this request waited to be retried."""


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    model: str
    api_key: str = ""
    temperature: float = 0.0
    max_tokens: int = 1024
    timeout: float = 60.0

    def __repr__(self) -> str:  # never let the key reach a log line or traceback
        return f"Endpoint(base_url={self.base_url!r}, model={self.model!r}, api_key=<hidden>)"

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 5  # attempts after the first
    backoff_base: float = 1.0  # seconds before the first retry; doubles each time
    backoff_max: float = 60.0
    retry_after_max: float = 120.0  # longest Retry-After honoured

    def backoff(self, retry: int, rng: random.Random) -> float:
        """Exponential backoff with jitter (50-100% of the doubled delay), so
        parallel requests that failed together do not retry together."""
        delay = min(self.backoff_max, self.backoff_base * (2**retry))
        return delay * rng.uniform(0.5, 1.0)


@dataclass(frozen=True)
class JudgeResult:
    output: str  # the judge's text (stripped); OFFICIAL_FAILURE_OUTPUT after an error
    error: str  # "" on success
    attempts: int
    seconds: float


def build_prompt(record: dict, *, swapped: bool) -> str:
    first, second = ("Output2", "Output1") if swapped else ("Output1", "Output2")
    return JUDGE_PROMPT.format(
        question=record["Text"], answer_a=record[first], answer_b=record[second]
    )


def image_data_url(data: bytes, name: str) -> str:
    """The image as a data URL, its MIME type guessed from the file name as
    the official script does."""
    mime, _ = mimetypes.guess_type(name)
    encoded = base64.b64encode(data).decode("ascii")
    return f"data:{mime or 'application/octet-stream'};base64,{encoded}"


def request_body(record: dict, image: bytes, endpoint: Endpoint, *, swapped: bool) -> dict:
    """The chat-completions request for one record; `image` is the bytes of
    the file the record's ``Image`` names."""
    return {
        "model": endpoint.model,
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": build_prompt(record, swapped=swapped)},
                    {
                        "type": "image_url",
                        "image_url": {"url": image_data_url(image, record["Image"])},
                    },
                ],
            }
        ],
        "temperature": endpoint.temperature,
        "max_tokens": endpoint.max_tokens,
    }


def redact(text: str, secret: str) -> str:
    return text.replace(secret, "[redacted]") if secret else text


def retry_after_seconds(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: a number of seconds or an
    HTTP date; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def content_of(payload: Any) -> str:
    """The assistant's text from a chat-completions response body."""
    try:
        content = payload["choices"][0]["message"].get("content")
    except (KeyError, IndexError, TypeError, AttributeError):
        raise ValueError("no choices[0].message in the response") from None
    if content is None:
        return ""
    if isinstance(content, list):  # some servers answer with content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if not isinstance(content, str):
        raise ValueError("choices[0].message.content is not text")
    return content


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None  # urllib then raises HTTPError with the 3xx status


def _post(endpoint: Endpoint, body: bytes) -> str:
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if endpoint.api_key:
        headers["Authorization"] = f"Bearer {endpoint.api_key}"
    request = urllib.request.Request(endpoint.url, data=body, headers=headers, method="POST")
    try:
        opener = urllib.request.build_opener(_NoRedirects)
        with opener.open(request, timeout=endpoint.timeout) as response:
            raw = response.read()
    except urllib.error.HTTPError as exc:
        try:
            detail = exc.read(MAX_ERROR_CHARS).decode("utf-8", "replace")
        except (http.client.HTTPException, OSError):  # the body broke off: the status will do
            detail = ""
        message = f"HTTP {exc.code}: {detail}".strip()
        if exc.code in FATAL_STATUSES:
            raise FatalEndpointError(message) from None
        if exc.code in RETRY_STATUSES:
            raise _Retryable(message, retry_after_seconds(exc.headers.get("Retry-After"))) from None
        raise ValueError(message) from None
    except TimeoutError:
        raise _Retryable(f"timed out after {endpoint.timeout:g} s") from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            raise _Retryable(f"timed out after {endpoint.timeout:g} s") from None
        raise _Retryable(f"connection failed: {exc.reason}") from None
    except (http.client.HTTPException, ConnectionError, OSError) as exc:
        raise _Retryable(f"connection failed: {type(exc).__name__}: {exc}") from None
    try:
        return content_of(json.loads(raw))
    except (ValueError, UnicodeDecodeError) as exc:
        raise _Retryable(f"unreadable response: {exc}") from None


def judge(
    body: dict,
    endpoint: Endpoint,
    policy: RetryPolicy,
    *,
    stop: threading.Event | None = None,
    rng: random.Random | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> JudgeResult:
    """Send one request, retrying timeouts, dropped connections, 429 and 5xx
    with exponential backoff (at least as long as Retry-After asks, up to
    ``policy.retry_after_max``). Other 4xx answers fail the item at once;
    401/403/404/405 raise FatalEndpointError. Raises Stopped if `stop` is set
    while waiting to retry."""
    rng = rng or random.Random()
    data = json.dumps(body).encode()
    started = clock()
    attempts = 0
    while True:
        attempts += 1
        try:
            text = _post(endpoint, data)
        except FatalEndpointError as exc:
            raise FatalEndpointError(redact(str(exc), endpoint.api_key)[:MAX_ERROR_CHARS]) from None
        except ValueError as exc:  # a 4xx that retrying will not fix
            return _failed(str(exc), endpoint, attempts, clock() - started)
        except _Retryable as exc:
            if attempts > policy.max_retries:
                return _failed(str(exc), endpoint, attempts, clock() - started)
            delay = policy.backoff(attempts - 1, rng)
            if exc.retry_after is not None:
                delay = max(delay, min(exc.retry_after, policy.retry_after_max))
            if stop is not None:
                if stop.wait(delay):
                    raise Stopped() from None
            else:
                time.sleep(delay)
            continue
        return JudgeResult(
            output=text.strip(), error="", attempts=attempts, seconds=clock() - started
        )


def _failed(message: str, endpoint: Endpoint, attempts: int, seconds: float) -> JudgeResult:
    error = redact(message, endpoint.api_key)[:MAX_ERROR_CHARS]
    return JudgeResult(
        output=OFFICIAL_FAILURE_OUTPUT,
        error=f"after {attempts} attempt{'s' if attempts != 1 else ''}: {error}",
        attempts=attempts,
        seconds=seconds,
    )
