"""Annotation benchmark: simulated annotators over HTTP against gunicorn + PostgreSQL.

    .venv/bin/python bench/annotate_bench.py [--duration 25] [--annotators 16] [--keep]

Builds a project of 5,211 items (the size of Multimodal RewardBench) over the
six domains, 3 votes each, in its own PostgreSQL database, starts the app
under gunicorn with 2 gthread workers x 4 threads and DEBUG off, after
``collectstatic``, as the Dockerfile does (``--worker-class sync`` to
compare), and makes the requests the browser makes, with a keep-alive HTTP
client per annotator thread (sync workers close after each answer; it
reconnects):

- login: ``POST /accounts/login/``;
- the first item: ``POST /p/<slug>/work/`` → 302 → ``GET /a/<id>/``;
- each judgement: ``POST /a/<id>/submit/`` with ``HX-Request: true``; the
  answer is the next item's ``#work`` fragment with ``HX-Push-Url`` (the claim
  happens inside), or ``HX-Redirect`` to the done page.

Phase 1: one annotator, p50/p95/p99 per request type. Phase 2: 16 annotators
with no think time for a fixed duration: judgements/s and errors, then the
database is checked (no item over its votes, no item twice for one person,
every acknowledged judgement stored exactly once). Phase 3: page weight with
``Accept-Encoding: gzip``. Targets are the issue's. Exits 1 when one is missed.

The script owns one database, named by DATABASE_URL (default below; the name
must start with ``bench``): dropped and created at the start, dropped at
the end unless --keep.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import hashlib
import http.client
import io
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import harness
from harness import (
    ROOT,
    Results,
    bench_database,
    database_url,
    migrate,
    print_table,
    recreate_database,
)

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_annotate"
HOST = "127.0.0.1"
PASSWORD = "bench-password-1"

# Targets (from the issue).
SOLO_P50_MS = 10.0
SOLO_P95_MS = 25.0
CONCURRENT_RATE = 150.0  # judgements/s with 16 annotators
FIRST_LOAD_BYTES = 300 * 1024
NEXT_ITEM_BYTES = 30 * 1024

# Multimodal RewardBench's items per domain (5,211 in all); --items scales them.
DOMAIN_COUNTS = (
    ("general_correctness", 623),
    ("general_preference", 654),
    ("knowledge", 630),
    ("reasoning", 1096),
    ("safety", 1008),
    ("vqa", 1200),
)
N_IMAGES = 8  # shared ImageAsset rows: the bench is not about image storage
WORDS = (
    "the", "image", "shows", "a", "chart", "with", "two", "bars", "red", "blue", "left",
    "right", "value", "answer", "because", "therefore", "step", "first", "second", "final",
    "total", "area", "angle", "triangle", "code", "function", "returns", "list", "error",
    "person", "holding", "sign", "text", "reads", "label", "count", "three", "four", "five",
    "object", "table", "graph", "axis", "increase", "decrease", "compare", "larger",
)  # fmt: skip
# Math that the reasoning items carry. Typesetting it, KaTeX in Chromium
# fetches exactly these fonts (checked with Playwright): a browser downloads
# only the @font-face files a page uses, so they count for a page with math.
MATH = r"so $x^2 + y^2 = r^2$ and $$\sum_{i=1}^{n} \frac{a_i+b_i}{2} \geq \sqrt{ab}$$"
KATEX_FONTS_FOR_MATH = ("KaTeX_Main-Regular", "KaTeX_Math-Italic", "KaTeX_Size2-Regular")
CODE = "```python\ndef area(r):\n    return 3.14159 * r ** 2\n```"


# --- Setup, in a subprocess with Django ---------------------------------------------------


def child_setup(params: dict) -> None:
    """Migrate, collect static files, create the project, items and users; print JSON."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    from annotate.importing.imagestore import image_storage_name
    from annotate.models import ImageAsset, Item, ItemPart, Membership, Project, shuffle_key
    from annotate.models.parts import render_parts_html
    from common.bulk import insert_rows
    from curation.models import Verdict

    migrate()
    call_command("collectstatic", verbosity=0, interactive=False)
    project = Project.objects.create(slug="bench", name="Annotation bench", votes_per_item=3)
    domains = {d.slug: d for d in project.create_default_domains()}

    images = []
    for n in range(N_IMAGES):
        data = bench_image(n)
        sha = hashlib.sha256(data).hexdigest()
        name = image_storage_name(sha, "JPEG")
        default_storage.save(name, ContentFile(data))
        images.append(
            ImageAsset(
                sha256=sha, file=name, format="JPEG", width=256, height=256, size_bytes=len(data)
            )
        )
    images = ImageAsset.objects.bulk_create(images)

    rng = random.Random(5211)
    items = []
    for slug, count in scaled_counts(params["items"]):
        for n in range(count):
            external_id = f"{slug}_{n}"
            items.append(
                Item(
                    project=project,
                    domain=domains[slug],
                    external_id=external_id,
                    prompt=words(rng, 10, 60) + "?",
                    image=images[len(items) % len(images)],
                    image_path=f"images/{external_id}.jpg",
                    response_1=response_text(rng, slug),
                    response_2=response_text(rng, slug),
                    model_1="bench-model-alpha",
                    model_2="bench-model-beta",
                    gold_choice=rng.choice("12"),
                    content_hash=hashlib.sha256(external_id.encode()).hexdigest(),
                    shuffle_key=shuffle_key(project.seed, external_id),
                    votes_needed=project.votes_per_item,
                )
            )
    items = Item.objects.bulk_create(items, batch_size=1000)
    # The items' content: their parts, as the MRB import writes them (the
    # columns above are those parts' derived columns).
    insert_rows(
        ItemPart,
        MRB_PART_FIELDS,
        [
            row
            for item in items
            for row in mrb_part_rows(
                item.pk,
                item.image_id,
                item.image_path,
                item.prompt,
                item.response_1,
                item.response_2,
            )
        ],
    )
    # What the import's render_part_html task stores: each part's HTML.
    render_parts_html(item_ids=[item.pk for item in items])
    # What the import's items_imported receiver makes: one Verdict per item.
    Verdict.objects.bulk_create(
        [Verdict(item=item, project=project) for item in items], batch_size=1000
    )

    # One PBKDF2 hash for all: hashing 17 passwords would only slow the setup.
    password = make_password(PASSWORD)
    users = get_user_model().objects.bulk_create(
        [
            get_user_model()(username=f"annotator{n:02d}", password=password)
            for n in range(params["annotators"] + 1)
        ]
    )
    Membership.objects.bulk_create(
        [
            Membership(project=project, user=u, role="annotator", pseudonym=f"A{n:02d}")
            for n, u in enumerate(users)
        ]
    )
    # API tokens (--api): what /account/token/ gives an annotator.
    tokens = Token.objects.bulk_create([Token(user=u, key=Token.generate_key()) for u in users])
    # What autovacuum does in production soon after an import (this machine's
    # PostgreSQL may run without it): planner statistics and the visibility
    # map. Without statistics PostgreSQL planned the vote's lock through the
    # annotator's index instead of the primary key.
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE" if connection.vendor == "postgresql" else "ANALYZE")
    if params.get("demo"):
        # --sqlite measures the embedded default as `make run` leaves it.
        call_command("seed_demo", verbosity=0, stdout=io.StringIO())
    print(
        json.dumps(
            {
                "slug": project.slug,
                "items": len(items),
                "users": [u.username for u in users],
                "tokens": {t.user.username: t.key for t in tokens},
                "prompt_chars": sum(len(i.prompt) for i in items) // len(items),
                "response_chars": sum(len(i.response_1) + len(i.response_2) for i in items)
                // (2 * len(items)),
            }
        )
    )


def scaled_counts(total: int) -> list[tuple[str, int]]:
    full = sum(n for _, n in DOMAIN_COUNTS)
    counts = [(slug, n * total // full) for slug, n in DOMAIN_COUNTS]
    short = total - sum(n for _, n in counts)
    return [(slug, n + (1 if i < short else 0)) for i, (slug, n) in enumerate(counts)]


def words(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(low, high)))


def response_text(rng: random.Random, domain: str) -> str:
    """A Markdown response of 40-400 words; some with lists, code or math."""
    parts = [words(rng, 20, 150) + "."]
    if rng.random() < 0.4:
        parts.append("\n".join(f"- {words(rng, 3, 12)}" for _ in range(rng.randint(2, 5))))
    if domain == "reasoning" and rng.random() < 0.5:
        parts.append(CODE if rng.random() < 0.5 else MATH)
    parts.append("**Answer:** " + words(rng, 20, 240) + ".")
    return "\n\n".join(parts)


def bench_image(n: int) -> bytes:
    """A 256x256 JPEG of ~20 KB (noise keeps it from compressing to nothing)."""
    from PIL import Image

    rng = random.Random(n)
    img = Image.frombytes("RGB", (256, 256), rng.randbytes(256 * 256 * 3))
    out = io.BytesIO()
    img.save(out, "JPEG", quality=20)
    return out.getvalue()


# --- The server ---------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class Gunicorn:
    """gunicorn on a free loopback port, started as the Dockerfile starts it."""

    def __init__(
        self, env: dict[str, str], log: Path, *, workers: int, worker_class: str, threads: int
    ):
        self.port = free_port()
        self.log = log
        args = [
            str(Path(sys.executable).parent / "gunicorn"),
            "config.wsgi",
            "--bind",
            f"{HOST}:{self.port}",
            "--workers",
            str(workers),
            "--worker-class",
            worker_class,
            "--log-level",
            "warning",
        ]
        if worker_class == "gthread":
            args += ["--threads", str(threads)]
        with log.open("wb") as fh:
            self.proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=fh, stderr=fh)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"gunicorn exited ({self.proc.returncode}):\n{self.tail()}")
            try:
                conn = http.client.HTTPConnection(HOST, self.port, timeout=5)
                conn.request("GET", "/accounts/login/")
                if conn.getresponse().status == 200:
                    conn.close()
                    return
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise SystemExit(f"gunicorn did not answer within 60 s:\n{self.tail()}")

    def worker_pids(self) -> list[int]:
        path = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        try:
            return [int(p) for p in path.read_text().split()]
        except OSError:
            return []

    def tail(self) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-40:])
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def cpu_seconds(pids: list[int]) -> dict[int, float]:
    """User + system CPU seconds of each process still alive, from /proc."""
    seconds = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        seconds[pid] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return seconds


def cpu_used(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds between two readings; processes started in between count whole."""
    return sum(t - before.get(pid, 0.0) for pid, t in after.items())


class CpuSampler(threading.Thread):
    """Reads the CPU time of a changing set of processes every `every` seconds,
    so one that exits meanwhile (a database connection older than
    DB_CONN_MAX_AGE is replaced) still counts up to its last reading."""

    def __init__(self, pids, every: float = 0.25):
        super().__init__(daemon=True)
        self.pids = pids  # a callable returning the pids to watch
        self.every = every
        self.first = cpu_seconds(pids())
        self.last = dict(self.first)
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.wait(self.every):
            self.last.update(cpu_seconds(self.pids()))

    def stop(self) -> float:
        self.stopping.set()
        self.join(timeout=5)
        self.last.update(cpu_seconds(self.pids()))
        return cpu_used(self.first, self.last)


def postgres_pids(database: str) -> list[int]:
    """PostgreSQL's shared processes and the backends serving `database`;
    not backends of other databases (other people's tests may be running)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "comm").read_text().strip() != "postgres":
                continue
            title = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode().split()
        except OSError:
            continue
        # A backend's title: "postgres: 15/main: USER DATABASE HOST(PORT) STATE".
        is_backend = any((t.endswith(")") and "(" in t) or t == "[local]" for t in title)
        if not is_backend or database in title:
            pids.append(int(entry.name))
    return pids


# --- A browser, minus the rendering -------------------------------------------------------


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes  # as received (compressed if the server compressed it)
    wire_bytes: int  # status line + headers + body, as transferred
    seconds: float

    def text(self) -> str:
        raw = self.body
        if self.headers.get("content-encoding") == "gzip":
            raw = gzip.decompress(raw)
        return raw.decode()


class Browser:
    """One user's keep-alive HTTP connection and cookies, sending the headers a
    browser sends. http.client reconnects by itself when the server closes."""

    def __init__(self, port: int):
        self.port = port
        self.origin = f"http://{HOST}:{port}"
        self.conn = http.client.HTTPConnection(HOST, port, timeout=60)
        self.cookies: dict[str, str] = {}

    def request(
        self,
        method: str,
        path: str,
        *,
        form: dict | None = None,
        json_body: dict | None = None,
        headers: dict[str, str] | None = None,
    ) -> Response:
        h = {"Accept-Encoding": "gzip", "User-Agent": "annotate-bench"}
        if self.cookies:
            h["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        body = None
        if form is not None:
            body = urlencode(form).encode()
            h["Content-Type"] = "application/x-www-form-urlencoded"
            h["Origin"] = self.origin
        if json_body is not None:
            body = json.dumps(json_body).encode()
            h["Content-Type"] = "application/json"
        h.update(headers or {})
        # A kept-alive connection the server closed while it was idle fails
        # before any answer; like a browser, reconnect and send once more.
        for attempt in (1, 2):
            reused = self.conn.sock is not None
            start = time.perf_counter()
            try:
                self.conn.request(method, path, body=body, headers=h)
                resp = self.conn.getresponse()
                data = resp.read()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.conn.close()
                if not reused or attempt == 2:
                    raise
            except (http.client.HTTPException, OSError):
                self.conn.close()
                raise
        seconds = time.perf_counter() - start
        header_list = resp.getheaders()
        for name, value in header_list:
            if name.lower() == "set-cookie":
                key, _, rest = value.partition("=")
                self.cookies[key.strip()] = rest.split(";", 1)[0]
        wire = len(f"HTTP/1.1 {resp.status} {resp.reason}\r\n") + 2 + len(data)
        wire += sum(len(k) + len(v) + 4 for k, v in header_list)
        return Response(resp.status, {k.lower(): v for k, v in header_list}, data, wire, seconds)

    def sign_in(self, username: str, password: str, next_path: str) -> Response:
        """The login form as a person sends it: fetch it for the CSRF token,
        post it, and expect the redirect with a session cookie."""
        page = self.request("GET", "/accounts/login/")
        token = CSRF_INPUT.search(page.text())
        if page.status != 200 or token is None:
            raise Failure(f"login page: {page.status}")
        resp = self.request(
            "POST",
            "/accounts/login/",
            form={
                "csrfmiddlewaretoken": token.group(1),
                "username": username,
                "password": password,
                "next": next_path,
            },
            headers={"Referer": f"{self.origin}/accounts/login/"},
        )
        if resp.status != 302 or "sessionid" not in self.cookies:
            raise Failure(f"login failed: {resp.status}")
        return resp

    def close(self) -> None:
        self.conn.close()


CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
CORRECTNESS = re.compile(r'data-correctness="(\d)"')
ITEM_URL = re.compile(r"^/a/(\d+)/$")


class Failure(Exception):
    pass


@dataclass
class Annotator:
    """Claims and judges items the way the compare page does."""

    browser: Browser
    username: str
    slug: str
    rng: random.Random
    timings: dict[str, list[float]] = field(default_factory=dict)
    acknowledged: dict[int, str] = field(default_factory=dict)  # assignment → rationale
    assignment: int | None = None
    token: str = ""
    correctness: bool = False
    done: bool = False

    def timed(self, kind: str, response: Response) -> Response:
        self.timings.setdefault(kind, []).append(response.seconds)
        return response

    def login(self) -> None:
        resp = self.timed(
            "login", self.browser.sign_in(self.username, PASSWORD, f"/p/{self.slug}/")
        )
        # The project page it redirects to holds the Start form.
        page = self.browser.request("GET", resp.headers["location"])
        token = CSRF_INPUT.search(page.text())
        if page.status != 200 or token is None:
            raise Failure(f"project page: {page.status}")
        self.token = token.group(1)

    def start(self) -> None:
        """POST /p/<slug>/work/ → 302 → GET /a/<id>/, as the Start button does."""
        resp = self.timed(
            "start: POST /p/<slug>/work/ → 302",
            self.browser.request(
                "POST",
                f"/p/{self.slug}/work/",
                form={"csrfmiddlewaretoken": self.token},
                headers={"Referer": f"{self.browser.origin}/p/{self.slug}/"},
            ),
        )
        if resp.status != 302:
            raise Failure(f"start: {resp.status}")
        location = resp.headers.get("location", "")
        match = ITEM_URL.match(location)
        if match is None:
            self.done = location.endswith("/work/done/")
            if not self.done:
                raise Failure(f"start redirected to {location!r}")
            return
        page = self.timed("compare page: GET /a/<id>/", self.browser.request("GET", location))
        if page.status != 200:
            raise Failure(f"compare page: {page.status}")
        self.assignment = int(match.group(1))
        self.read_form(page.text())

    def read_form(self, html: str) -> None:
        token = CSRF_INPUT.search(html)
        correctness = CORRECTNESS.search(html)
        if token is None or correctness is None:
            raise Failure("the compare page has no form")
        self.token = token.group(1)
        self.correctness = correctness.group(1) == "1"

    def judge(self) -> Response:
        """Submit the current item; take the next one from the answer."""
        rationale = f"{self.username} #{len(self.acknowledged) + 1} {self.rng.getrandbits(32):x}"
        form = {
            "csrfmiddlewaretoken": self.token,
            "choice": self.rng.choice(("left", "right", "left", "right", "tie")),
            "confidence": str(self.rng.randint(1, 3)),
            "rationale": rationale,
            "problem_reason": "",
            "active_seconds": str(self.rng.randint(3, 90)),
        }
        if self.correctness:
            form["correct_left"] = self.rng.choice(("yes", "no", "unsure"))
            form["correct_right"] = self.rng.choice(("yes", "no", "unsure"))
        url = f"/a/{self.assignment}/"
        resp = self.timed(
            PAGE_SUBMIT_NEXT,
            self.browser.request(
                "POST",
                f"/a/{self.assignment}/submit/",
                form=form,
                headers={
                    "HX-Request": "true",
                    "HX-Current-URL": self.browser.origin + url,
                    "HX-Target": "work",
                    "HX-Trigger": "judge-form",
                    "Referer": self.browser.origin + url,
                },
            ),
        )
        if resp.status == 204 and resp.headers.get("hx-redirect", "").endswith("/work/done/"):
            self.acknowledged[self.assignment] = rationale
            self.done = True
            return resp
        push = ITEM_URL.match(resp.headers.get("hx-push-url", ""))
        if resp.status != 200 or push is None:
            raise Failure(f"submit: {resp.status} {resp.body[:200]!r}")
        self.acknowledged[self.assignment] = rationale
        self.assignment = int(push.group(1))
        self.read_form(resp.text())
        return resp


PAGE_SUBMIT_NEXT = "submit + next item: POST /a/<id>/submit/ (htmx)"
API_NEXT = "API next: POST /api/v1/projects/<slug>/assignments/next/"
API_SUBMIT = "API submit: POST /api/v1/assignments/<id>/judgement/"
API_DETAIL = "API assignment: GET /api/v1/assignments/<id>/"
API_SUBMIT_NEXT = "API submit + next: POST /api/v1/assignments/<id>/judgement/?next=true"


@dataclass
class ApiAnnotator(Annotator):
    """Claims and judges through /api/v1/ with token authentication, as a
    script or labelling tool would: next assignment, then submit with
    ?next=true, which answers with the next assignment (one request per
    judgement, as the page's htmx submit); or, `separate`, submit and next
    as two requests."""

    api_token: str = ""
    separate: bool = False

    def call(self, kind: str | None, method: str, path: str, body: dict | None = None):
        headers = {"Authorization": f"Token {self.api_token}", "Accept": "application/json"}
        resp = self.browser.request(method, path, json_body=body, headers=headers)
        return self.timed(kind, resp) if kind else resp

    def login(self) -> None:
        """Tokens need no login; check that this one works."""
        resp = self.call(None, "GET", "/api/v1/projects/")
        if resp.status != 200:
            raise Failure(f"token rejected: {resp.status}")

    def start(self) -> None:
        resp = self.call(API_NEXT, "POST", f"/api/v1/projects/{self.slug}/assignments/next/")
        if resp.status in (202, 204):  # nothing free now (202: more may come later)
            self.done = True
            return
        if resp.status != 200:
            raise Failure(f"next: {resp.status} {resp.body[:200]!r}")
        self.take(json.loads(resp.text()))

    def take(self, assignment: dict | None) -> None:
        if assignment is None:
            self.done = True
            return
        self.assignment = assignment["id"]
        self.correctness = assignment["domain"]["kind"] == "correctness"

    def page_load(self) -> None:
        resp = self.call(API_DETAIL, "GET", f"/api/v1/assignments/{self.assignment}/")
        if resp.status != 200:
            raise Failure(f"assignment: {resp.status}")

    def judge(self) -> Response:
        """Submit the current assignment, then ask for the next one."""
        rationale = f"{self.username} #{len(self.acknowledged) + 1} {self.rng.getrandbits(32):x}"
        body = {
            "choice": self.rng.choice(("left", "right", "left", "right", "tie")),
            "confidence": self.rng.randint(1, 3),
            "rationale": rationale,
            "active_seconds": self.rng.randint(3, 90),
        }
        if self.correctness:
            body["correct_left"] = self.rng.choice(("yes", "no", "unsure"))
            body["correct_right"] = self.rng.choice(("yes", "no", "unsure"))
        url = f"/api/v1/assignments/{self.assignment}/judgement/"
        if not self.separate:
            resp = self.call(API_SUBMIT_NEXT, "POST", url + "?next=true", body)
            if resp.status != 201:
                raise Failure(f"submit: {resp.status} {resp.body[:200]!r}")
            self.acknowledged[self.assignment] = rationale
            self.take(json.loads(resp.text())["next"])
            return resp
        resp = self.call(API_SUBMIT, "POST", url, body)
        if resp.status != 201:
            raise Failure(f"submit: {resp.status} {resp.body[:200]!r}")
        self.acknowledged[self.assignment] = rationale
        self.start()
        return resp


# --- Phases -------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def make_annotator(
    port: int, username: str, slug: str, seed, tokens: dict | None, separate: bool = False
) -> Annotator:
    if tokens is None:
        return Annotator(Browser(port), username, slug, random.Random(seed))
    return ApiAnnotator(
        Browser(port),
        username,
        slug,
        random.Random(seed),
        api_token=tokens[username],
        separate=separate,
    )


def phase_solo(
    port: int, slug: str, username: str, cycles: int, page_loads: int, tokens: dict | None
) -> Annotator:
    annotator = make_annotator(port, username, slug, 1, tokens)
    annotator.login()
    annotator.start()
    for n in range(cycles):
        if annotator.done:
            break
        if isinstance(annotator, ApiAnnotator):
            # The API alternates: submit and next as two requests, then submit
            # with ?next=true (so both see the same state of the project).
            annotator.separate = n % 2 == 0
        annotator.judge()
    # Page loads: the Start button resumes the open item, then the full page
    # (API: the open assignment again).
    for _ in range(page_loads):
        if annotator.done:
            break
        if isinstance(annotator, ApiAnnotator):
            annotator.page_load()
        else:
            annotator.start()
    return annotator


@dataclass
class ConcurrentResult:
    seconds: float
    completions: list[float]  # perf_counter at each acknowledged judgement
    latencies: list[float]
    errors: list[str]
    annotators: list[Annotator]
    client_cpu: float
    server_cpu: float
    postgres_cpu: float
    started: float


def phase_concurrent(
    port: int,
    slug: str,
    usernames: list[str],
    duration: float,
    server_pids: list[int],
    database: str,
    tokens: dict | None,
    separate: bool = False,
) -> ConcurrentResult:
    annotators = [make_annotator(port, u, slug, u, tokens, separate) for u in usernames]
    for a in annotators:  # PBKDF2 logins are slow on purpose; not part of the run
        a.login()
        a.start()
    lock = threading.Lock()
    completions: list[float] = []
    latencies: list[float] = []
    errors: list[str] = []
    barrier = threading.Barrier(len(annotators) + 1)
    deadline = 0.0

    def run(a: Annotator) -> None:
        barrier.wait()
        failures = 0
        while not a.done and time.perf_counter() < deadline:
            try:
                resp = a.judge()
            except (Failure, OSError, http.client.HTTPException) as exc:
                with lock:
                    errors.append(f"{a.username}: {exc}")
                failures += 1
                if failures > 20:
                    return
                try:
                    a.start()  # what a person does after an error: start again
                except (Failure, OSError, http.client.HTTPException) as again:
                    with lock:
                        errors.append(f"{a.username}: restart: {again}")
                continue
            with lock:
                completions.append(time.perf_counter())
                latencies.append(resp.seconds)

    threads = [threading.Thread(target=run, args=(a,), daemon=True) for a in annotators]
    for t in threads:
        t.start()
    client_before = time.process_time()
    server_cpu = CpuSampler(lambda: server_pids)
    postgres_cpu = CpuSampler(lambda: postgres_pids(database))
    server_cpu.start()
    postgres_cpu.start()
    started = time.perf_counter()
    deadline = started + duration
    barrier.wait()
    for t in threads:
        t.join(timeout=duration + 120)
    elapsed = time.perf_counter() - started
    # The samplers' own reading of /proc is a small part of this process's CPU.
    client_cpu = time.process_time() - client_before
    for a in annotators:
        a.browser.close()
    return ConcurrentResult(
        elapsed,
        completions,
        latencies,
        errors,
        annotators,
        client_cpu,
        server_cpu.stop(),
        postgres_cpu.stop(),
        started,
    )


def windows(completions: list[float], start: float, seconds: float, width: float = 5.0):
    """Judgements/s in consecutive windows of `width` seconds."""
    rates = []
    t = start
    while t + width <= start + seconds + 1e-9:
        n = sum(1 for c in completions if t <= c < t + width)
        rates.append(n / width)
        t += width
    return rates


@dataclass
class Weight:
    html: int
    assets: dict[str, int]
    katex: dict[str, int]
    all_fonts: int
    fragment: int
    fragment_uncompressed: int
    html_uncompressed: int


def phase_weight(port: int, annotator: Annotator) -> Weight:
    """Bytes a browser transfers for the compare page, gzip accepted."""
    b = annotator.browser
    page = b.request("GET", f"/a/{annotator.assignment}/")
    html = page.text()
    assets: dict[str, int] = {}
    urls = re.findall(r'<link rel="stylesheet" href="([^"]+)"', html)
    urls += re.findall(r'<script src="([^"]+)"', html)
    for url in urls:
        resp = b.request("GET", url)
        if resp.status != 200:
            raise Failure(f"{url}: {resp.status}")
        assets[url] = resp.wire_bytes
    katex: dict[str, int] = {}
    katex_js = re.search(r'data-katex-js="([^"]+)"', html)
    katex_css = re.search(r'data-katex-css="([^"]+)"', html)
    all_fonts = 0
    if katex_js and katex_css:
        for url in (katex_js.group(1), katex_css.group(1)):
            katex[url] = b.request("GET", url).wire_bytes
        css = b.request("GET", katex_css.group(1)).text()
        base = katex_css.group(1).rsplit("/", 1)[0] + "/"
        for font in sorted(set(re.findall(r"url\((fonts/[^)]+\.woff2)\)", css))):
            size = b.request("GET", base + font).wire_bytes
            all_fonts += size
            if any(name in font for name in KATEX_FONTS_FOR_MATH):
                katex[base + font] = size
    annotator.read_form(html)
    fragment = annotator.judge()
    return Weight(
        html=page.wire_bytes,
        assets=assets,
        katex=katex,
        all_fonts=all_fonts,
        fragment=fragment.wire_bytes,
        fragment_uncompressed=len(fragment.text().encode()),
        html_uncompressed=len(html.encode()),
    )


def image_timings(annotator: Annotator, n: int) -> list[float]:
    page = annotator.browser.request("GET", f"/a/{annotator.assignment}/")
    src = re.search(r'<img id="viewer-img" src="([^"]+)"', page.text())
    if src is None:
        return []
    return [annotator.browser.request("GET", src.group(1)).seconds for _ in range(n)]


# --- Database checks ------------------------------------------------------------------------


def check_database(url: str, acknowledged: dict[int, str], slug: str = "") -> dict[str, int]:
    """Invariants after the run, straight from the tables (no ORM); `url` is
    a PostgreSQL URL or the path of an SQLite file. The invariants hold over
    every project; the judgements are matched against what the annotators
    were told only in the bench's own project (`slug`): the demo seeds votes
    in others (every project when `slug` is empty)."""
    if url.startswith(("postgres://", "postgresql://")):
        import psycopg

        connect = psycopg.connect
    else:
        import sqlite3

        def connect(path):
            return contextlib.closing(sqlite3.connect(path))

    with connect(url) as conn:

        def one(sql: str, *args) -> int:
            return conn.execute(sql, args).fetchone()[0]

        counts = {
            "items over votes_needed (open + submitted assignments)": one(
                """SELECT count(*) FROM (
                     SELECT a.item_id FROM annotate_assignment a
                     JOIN annotate_item i ON i.id = a.item_id
                     WHERE a.status IN ('open', 'submitted')
                     GROUP BY a.item_id, i.votes_needed HAVING count(*) > i.votes_needed) x"""
            ),
            "items whose live_assignments disagree with their assignments": one(
                """SELECT count(*) FROM annotate_item i WHERE i.live_assignments <> (
                     SELECT count(*) FROM annotate_assignment a
                     WHERE a.item_id = i.id AND a.status IN ('open', 'submitted'))"""
            ),
            "(item, annotator) pairs assigned twice": one(
                """SELECT count(*) FROM (SELECT 1 FROM annotate_assignment
                     GROUP BY item_id, annotator_id HAVING count(*) > 1) x"""
            ),
            "items whose tallies disagree with their judgements": one(
                """SELECT count(*) FROM annotate_item i
                     WHERE i.votes_1 + i.votes_2 + i.votes_tie + i.votes_ranked
                     <> (SELECT count(*) FROM annotate_judgement j
                         JOIN annotate_assignment a ON a.id = j.assignment_id
                         WHERE a.item_id = i.id AND j.is_current)"""
            ),
        }
        placeholder = "%s" if url.startswith(("postgres://", "postgresql://")) else "?"
        rows = conn.execute(
            f"""SELECT j.assignment_id, count(*), min(j.rationale) FROM annotate_judgement j
               JOIN annotate_assignment a ON a.id = j.assignment_id
               JOIN annotate_item i ON i.id = a.item_id
               JOIN annotate_project p ON p.id = i.project_id
               WHERE p.slug = {placeholder} OR {placeholder} = ''
               GROUP BY j.assignment_id""",
            (slug, slug),
        ).fetchall()
        stored = {aid: (n, rationale) for aid, n, rationale in rows}
        counts["acknowledged judgements not stored exactly once as sent"] = sum(
            1 for aid, r in acknowledged.items() if stored.get(aid) != (1, r)
        )
        counts["stored judgements nobody was told about"] = sum(
            1 for aid in stored if aid not in acknowledged
        )
        counts["submitted assignments without a judgement"] = one(
            """SELECT count(*) FROM annotate_assignment a WHERE a.status = 'submitted'
                 AND NOT EXISTS (SELECT 1 FROM annotate_judgement j WHERE j.assignment_id = a.id)"""
        )
        counts["members whose judged count disagrees with their assignments"] = one(
            """SELECT count(*) FROM annotate_membership m WHERE m.judged <> (
                 SELECT count(*) FROM annotate_assignment a
                 INNER JOIN annotate_item i ON i.id = a.item_id
                 WHERE a.annotator_id = m.user_id AND i.project_id = m.project_id
                   AND a.status = 'submitted')"""
        )
        counts["items without a Verdict row"] = one(
            """SELECT count(*) FROM annotate_item i
               WHERE NOT EXISTS (SELECT 1 FROM curation_verdict v WHERE v.item_id = i.id)"""
        )
    return counts


# --- Report ---------------------------------------------------------------------------------


def report(*, solo, images, crowd, problems, weight, setup_seconds) -> Results:
    t = Results()
    for kind, values in solo.timings.items():
        if kind == "login":
            t.add(f"1 annotator, login (PBKDF2, n={len(values)})", ms(statistics.median(values)))
            continue
        p50, p95, p99 = (percentile(values, q) for q in (0.5, 0.95, 0.99))
        t.add(
            f"1 annotator, {kind}, p50 (n={len(values)})",
            ms(p50),
            f"≤ {SOLO_P50_MS:.0f} ms",
            p50 <= SOLO_P50_MS / 1000,
        )
        t.add(
            f"1 annotator, {kind}, p95",
            ms(p95),
            f"≤ {SOLO_P95_MS:.0f} ms",
            p95 <= SOLO_P95_MS / 1000,
        )
        t.add(f"1 annotator, {kind}, p99", ms(p99))
    if images:
        t.add(
            f"1 annotator, item image GET (n={len(images)}), p50 / p95",
            f"{ms(percentile(images, 0.5))} / {ms(percentile(images, 0.95))}",
        )

    c, n = crowd, len(crowd.annotators)
    rate = len(c.completions) / c.seconds
    t.add(
        f"{n} annotators, judgements/s over {c.seconds:.1f} s ({len(c.completions):,})",
        f"{rate:.1f}/s",
        f"≥ {CONCURRENT_RATE:.0f}/s",
        rate >= CONCURRENT_RATE,
    )
    window_rates = windows(c.completions, c.started, c.seconds)
    if window_rates:
        t.add(
            f"{n} annotators, slowest / fastest 5 s window",
            f"{min(window_rates):.1f} / {max(window_rates):.1f}/s",
        )
    t.add(f"{n} annotators, errors", str(len(c.errors)), "0", not c.errors)
    if c.latencies:
        t.add(
            f"{n} annotators, submit latency p50 / p95 / p99",
            " / ".join(ms(percentile(c.latencies, q)) for q in (0.5, 0.95, 0.99)),
        )
    t.add(
        f"{n} annotators, CPU used: gunicorn workers / PostgreSQL / load generator",
        f"{c.server_cpu / c.seconds:.0%} / {c.postgres_cpu / c.seconds:.0%} / "
        f"{c.client_cpu / c.seconds:.0%} of a core",
        f"{os.cpu_count()} cores",
    )
    if c.completions:
        # CPU time, unlike wall time, hardly depends on what else runs on the
        # machine: the figure to compare between runs on a shared machine.
        per = [cpu * 1000 / len(c.completions) for cpu in (c.server_cpu, c.postgres_cpu)]
        client = c.client_cpu * 1000 / len(c.completions)
        t.add(
            f"{n} annotators, CPU per judgement: gunicorn / PostgreSQL / load generator",
            f"{per[0]:.1f} / {per[1]:.1f} / {client:.1f} ms",
        )
        t.add(
            f"  judgements/s that CPU cost allows on {os.cpu_count()} idle cores",
            f"{(os.cpu_count() or 1) * 1000 / (sum(per) + client):.0f}/s",
        )
    for label, count in problems.items():
        t.add(f"database: {label}", str(count), "0", count == 0)

    if weight is None:  # --api: no pages
        t.add(
            "setup: migrate, collectstatic, items, users (not measured)", f"{setup_seconds:.1f} s"
        )
        return t
    w = weight
    first_load = w.html + sum(w.assets.values())
    fonts = {k: v for k, v in w.katex.items() if k.endswith(".woff2")}
    with_math = first_load + sum(w.katex.values())
    t.add(
        f"first load, no math: HTML {kb(w.html)} ({kb(w.html_uncompressed)} raw) "
        f"+ {len(w.assets)} CSS/JS",
        kb(first_load),
        f"≤ {FIRST_LOAD_BYTES // 1024} KB",
        first_load <= FIRST_LOAD_BYTES,
    )
    t.add(
        f"first load, with math: + KaTeX JS, CSS, the {len(fonts)} fonts the math uses",
        kb(with_math),
        f"≤ {FIRST_LOAD_BYTES // 1024} KB",
        with_math <= FIRST_LOAD_BYTES,
    )
    t.add(
        "  (worst case: with all 20 KaTeX fonts)", kb(with_math - sum(fonts.values()) + w.all_fonts)
    )
    t.add(
        f"next item: htmx fragment ({kb(w.fragment_uncompressed)} raw)",
        kb(w.fragment),
        f"≤ {NEXT_ITEM_BYTES // 1024} KB",
        w.fragment <= NEXT_ITEM_BYTES,
    )
    for url, size in {**w.assets, **w.katex}.items():
        t.add(f"  {url}", kb(size))
    t.add("setup: migrate, collectstatic, items, users (not measured)", f"{setup_seconds:.1f} s")
    return t


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def kb(n: int) -> str:
    return f"{n / 1024:.1f} KB"


def child_env(url: str, tmp: Path) -> dict[str, str]:
    return harness.child_env(
        url,
        tmp,
        STATIC_ROOT=str(tmp / "static"),
        SECRET_KEY=hashlib.sha256(os.urandom(32)).hexdigest(),
        ALLOWED_HOSTS=HOST,
    )


def interpreter() -> str:
    """Which CPython runs gunicorn (this one): its speed matters as much as
    the machine's. The production image's (python:3.11-slim) is built with
    profile-guided and link-time optimisation; pyenv's default build is not
    (bench/HISTORY.md, sixth round)."""
    import platform

    return f"CPython {platform.python_version()} at {os.path.realpath(sys.executable)}"


def api_mode(args) -> str:
    if not args.api:
        return ""
    loop = "submit and next as two requests" if args.api_separate else "submit with ?next=true"
    return f" (API, token auth; {args.annotators} annotators: {loop})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=5211, help="items in the project (5211)")
    parser.add_argument("--annotators", type=int, default=16, help="concurrent annotators (16)")
    parser.add_argument(
        "--duration",
        type=float,
        default=None,
        help="concurrent phase, s (25; --sqlite: at most, 600, so --votes decides)",
    )
    parser.add_argument("--cycles", type=int, default=300, help="solo judgements (300)")
    parser.add_argument("--page-loads", type=int, default=100, help="solo page loads (100)")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers (2)")
    parser.add_argument(
        "--worker-class",
        choices=("sync", "gthread"),
        default="gthread",
        help="gunicorn worker class (gthread, as the Dockerfile)",
    )
    parser.add_argument("--threads", type=int, default=4, help="threads per gthread worker (4)")
    parser.add_argument("--keep", action="store_true", help="keep the temp folder and database")
    parser.add_argument(
        "--api",
        action="store_true",
        help="judge through /api/v1/ with token auth (submit with ?next=true), not the pages "
        "(with --sqlite too)",
    )
    parser.add_argument(
        "--api-separate",
        action="store_true",
        help="with --api: the concurrent annotators submit and ask for the next item in two "
        "requests",
    )
    parser.add_argument(
        "--sqlite",
        action="store_true",
        help="the embedded default as `make run` serves it (SQLite, gunicorn 1 worker x "
        "--threads, a solo Celery worker, the demo seeded): p50/p95/p99 of a vote at 1 and "
        "--annotators (8) concurrent annotators, and the RSS sum of those processes",
    )
    parser.add_argument(
        "--votes",
        type=int,
        default=15000,
        help="--sqlite: judgements before the memory reading (15000; the run stops "
        "earlier at --duration)",
    )
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="--sqlite: seconds each concurrent annotator waits between votes (0: none)",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_setup(json.loads(args.child))
        return 0
    if args.api_separate and not args.api:
        parser.error("--api-separate goes with --api")
    if args.sqlite:
        if args.duration is None:
            args.duration = 600.0
        if args.votes < 1000:
            parser.error("--votes is at least 1000: a p99 over fewer is one of the worst few")
        return main_sqlite(args)
    if args.duration is None:
        args.duration = 25.0
    if not 1 <= args.duration <= 600 or args.items < 10 or args.annotators < 1:
        parser.error("--duration is 1-600 s, --items at least 10, --annotators at least 1")

    url = database_url(DEFAULT_DATABASE_URL)
    name, _ = bench_database(url)
    tmp = Path(tempfile.mkdtemp(prefix="annotate-bench-"))
    env = child_env(url, tmp)
    server = None
    failed = False
    try:
        print(
            f"creating database {name}, migrating, creating {args.items} items ...", file=sys.stderr
        )
        load_before = os.getloadavg()[0]
        recreate_database(url)
        start = time.perf_counter()
        setup = harness.run_child(
            __file__,
            ["--child", json.dumps({"items": args.items, "annotators": args.annotators})],
            env,
            failure="the setup failed",
        )
        setup_seconds = time.perf_counter() - start
        solo_user, *crowd = setup["users"]

        server = Gunicorn(
            env,
            tmp / "gunicorn.log",
            workers=args.workers,
            worker_class=args.worker_class,
            threads=args.threads,
        )
        workers = server.worker_pids()
        print(
            f"gunicorn on port {server.port}, workers {workers}; phase 1: one annotator ...",
            file=sys.stderr,
        )
        tokens = setup["tokens"] if args.api else None
        solo = phase_solo(
            server.port, setup["slug"], solo_user, args.cycles, args.page_loads, tokens
        )
        images = [] if args.api else image_timings(solo, 50)

        print(f"phase 2: {len(crowd)} annotators for {args.duration:.0f} s ...", file=sys.stderr)
        crowd_result = phase_concurrent(
            server.port,
            setup["slug"],
            crowd,
            args.duration,
            workers,
            name,
            tokens,
            separate=args.api_separate,
        )

        weight = None
        if not args.api:
            print("phase 3: page weight ...", file=sys.stderr)
            weight = phase_weight(server.port, solo)
        solo.browser.close()
        server.stop()
        server = None

        acknowledged = dict(solo.acknowledged)
        for a in crowd_result.annotators:
            acknowledged.update(a.acknowledged)
        print("checking the database ...", file=sys.stderr)
        problems = check_database(url, acknowledged, setup["slug"])

        table = report(
            solo=solo,
            images=images,
            crowd=crowd_result,
            problems=problems,
            weight=weight,
            setup_seconds=setup_seconds,
        )
        print(
            f"\nAnnotation bench{api_mode(args)}: PostgreSQL "
            f"database {name}, {setup['items']:,} items x 3 "
            f"votes, gunicorn {args.workers} {args.worker_class} workers"
            + (f" x {args.threads} threads" if args.worker_class == "gthread" else "")
            + f", {os.cpu_count()} CPUs (load average {load_before:.2f} before the run, "
            f"{os.getloadavg()[0]:.2f} after); responses average "
            f"{setup['response_chars']} chars; {interpreter()}\n"
        )
        print_table(table.rows, rstrip=True)
        failed = table.failed
        c = crowd_result
        if c.errors:
            print("\nfirst errors:", *c.errors[:10], sep="\n  ")
    finally:
        if server is not None:
            server.stop()
        if args.keep:
            print(f"\nkept {tmp} and database {name}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
            recreate_database(url, create=False)
    return 1 if failed else 0


# --- The embedded default (--sqlite) ---------------------------------------------------------

SQLITE_P99_MS = 150.0  # a vote at 8 concurrent annotators (issue 20)
SQLITE_RSS_MB = 400.0  # every process `make run` starts, summed


def process_tree(root: int) -> list[int]:
    """`root` and its descendants, from /proc."""
    pids, todo = [], [root]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        try:
            tasks = Path(f"/proc/{pid}/task").iterdir()
            for task in tasks:
                todo += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return pids


def memory_kib(pids: list[int]) -> tuple[int, int]:
    """(RSS, PSS) summed over `pids`, KiB, from /proc/<pid>/smaps_rollup."""
    rss = pss = 0
    for pid in pids:
        try:
            text = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("Rss:"):
                rss += int(line.split()[1])
            elif line.startswith("Pss:"):
                pss += int(line.split()[1])
    return rss, pss


class MemorySampler(threading.Thread):
    """The peak of the summed RSS (and PSS) of a set of process trees."""

    def __init__(self, roots: list[int], every: float = 0.5):
        super().__init__(daemon=True)
        self.roots, self.every = roots, every
        self.peak_rss = self.peak_pss = 0
        self.stopping = threading.Event()

    def read(self) -> tuple[int, int]:
        pids = [pid for root in self.roots for pid in process_tree(root)]
        rss, pss = memory_kib(pids)
        self.peak_rss, self.peak_pss = max(self.peak_rss, rss), max(self.peak_pss, pss)
        return rss, pss

    def run(self) -> None:
        while not self.stopping.wait(self.every):
            self.read()

    def stop(self) -> tuple[int, int]:
        self.stopping.set()
        self.join(timeout=5)
        return self.read()


def main_sqlite(args) -> int:
    """The embedded default under a team's load; see --sqlite."""
    tmp = Path(tempfile.mkdtemp(prefix="annotate-bench-sqlite-"))
    # No DATABASE_URL: the settings' own embedded SQLite (DATA_DIR/db.sqlite3)
    # with its options, exactly as `make run`.
    env = child_env("", tmp)
    env.pop("DATABASE_URL", None)
    db_path = tmp / "data" / "db.sqlite3"
    server = worker = None
    failed = False
    try:
        print(f"SQLite in {tmp}: migrating, {args.items} items and the demo ...", file=sys.stderr)
        load_before = os.getloadavg()[0]
        setup = harness.run_child(
            __file__,
            [
                "--child",
                json.dumps({"items": args.items, "annotators": args.annotators, "demo": True}),
            ],
            env,
            failure="the setup failed",
        )
        solo_user, *crowd = setup["users"]
        server = Gunicorn(
            env, tmp / "gunicorn.log", workers=1, worker_class="gthread", threads=args.threads
        )
        with (tmp / "celery.log").open("wb") as log:
            worker = subprocess.Popen(
                [
                    str(Path(sys.executable).parent / "celery"),
                    "-A",
                    "config",
                    "worker",
                    "--pool=solo",
                    "--loglevel=warning",
                ],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=log,
            )
        time.sleep(3)  # the worker imports the app
        sampler = MemorySampler([server.proc.pid, worker.pid])
        sampler.start()
        idle_rss, _idle_pss = sampler.read()
        print(f"phase 1: one annotator, {args.cycles} votes ...", file=sys.stderr)
        tokens = setup["tokens"] if args.api else None
        solo = phase_solo(server.port, setup["slug"], solo_user, args.cycles, 0, tokens)
        # The vote and the next item in one request: the page's htmx submit,
        # or the API's submit with ?next=true (the lone API annotator
        # alternates it with the two-request loop, timed apart).
        solo_votes = solo.timings.get(API_SUBMIT_NEXT if args.api else PAGE_SUBMIT_NEXT, [])
        crowd = crowd[: args.annotators]
        print(
            f"phase 2: {len(crowd)} annotators until {args.votes} votes "
            f"(at most {args.duration:.0f} s) ...",
            file=sys.stderr,
        )
        server_cpu = CpuSampler(lambda: process_tree(server.proc.pid))
        server_cpu.start()
        result = phase_concurrent_until(server.port, setup["slug"], crowd, args, tokens)
        web_cpu = server_cpu.stop()
        rss, pss = sampler.stop()
        server.stop()
        server = None
        acknowledged = dict(solo.acknowledged)
        for a in result.annotators:
            acknowledged.update(a.acknowledged)
        problems = check_database(str(db_path), acknowledged, setup["slug"])

        def quantiles(values):
            return " / ".join(ms(percentile(values, q)) for q in (0.5, 0.95, 0.99))

        def verdict(ok: bool) -> str:
            return "ok" if ok else "MISSED"

        p99 = percentile(result.latencies, 0.99) * 1000
        rss_mb, pss_mb = rss / 1024, pss / 1024
        rows = [
            (
                f"vote + next item, 1 annotator, p50 / p95 / p99 ({len(solo_votes)} votes)",
                quantiles(solo_votes),
                "",
                "",
            ),
            (
                f"vote + next item, {len(crowd)} concurrent, p50 / p95 / p99 "
                f"({len(result.latencies)} votes, think {args.think:g} s)",
                quantiles(result.latencies),
                f"p99 <= {SQLITE_P99_MS:.0f} ms",
                verdict(p99 <= SQLITE_P99_MS),
            ),
            (
                f"server CPU per vote, {len(crowd)} concurrent (gunicorn; SQLite runs in it)",
                f"{1000 * web_cpu / max(1, len(result.completions)):.2f} ms",
                "",
                "",
            ),
            (
                f"judgements/s, {len(crowd)} concurrent",
                f"{len(result.completions) / result.seconds:.1f}",
                "",
                "",
            ),
            (
                "RSS sum of gunicorn + Celery, idle after the demo",
                f"{idle_rss / 1024:.0f} MB",
                "",
                "",
            ),
            (
                f"RSS sum after {len(acknowledged):,} votes (PSS)",
                f"{rss_mb:.0f} MB ({pss_mb:.0f} MB)",
                f"<= {SQLITE_RSS_MB:.0f} MB",
                verdict(rss_mb <= SQLITE_RSS_MB),
            ),
            (
                "RSS sum, peak during the run (PSS)",
                f"{sampler.peak_rss / 1024:.0f} MB ({sampler.peak_pss / 1024:.0f} MB)",
                "",
                "",
            ),
            ("errors", str(len(result.errors)), "0", verdict(not result.errors)),
        ] + [(name, str(n), "0", "MISSED") for name, n in problems.items() if n]
        failed = (
            p99 > SQLITE_P99_MS
            or rss_mb > SQLITE_RSS_MB
            or bool(result.errors)
            or any(problems.values())
        )
        print(
            f"\nAnnotation bench, embedded default (--sqlite){api_mode(args)}: "
            f"{setup['items']:,} items "
            f"+ the demo, gunicorn 1 gthread worker x {args.threads} threads, Celery solo "
            f"worker; {os.cpu_count()} CPUs (load average {load_before:.2f} before, "
            f"{os.getloadavg()[0]:.2f} after); {interpreter()}\n"
        )
        print_table(rows, rstrip=True)
        if result.errors:
            print("\nfirst errors:", *result.errors[:10], sep="\n  ")
    finally:
        if server is not None:
            server.stop()
        if worker is not None and worker.poll() is None:
            worker.terminate()
            worker.wait(timeout=30)
        if args.keep:
            print(f"\nkept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


def phase_concurrent_until(
    port: int, slug: str, usernames: list[str], args, tokens: dict | None = None
) -> ConcurrentResult:
    """Concurrent annotators with no think time until `args.votes` judgements
    in all (or `args.duration` seconds); with `tokens`, through the API."""
    annotators = [make_annotator(port, u, slug, u, tokens, args.api_separate) for u in usernames]
    for a in annotators:
        a.login()
        a.start()
    lock = threading.Lock()
    completions: list[float] = []
    latencies: list[float] = []
    errors: list[str] = []
    barrier = threading.Barrier(len(annotators) + 1)
    started = time.perf_counter()
    deadline = started + args.duration

    def run(a: Annotator) -> None:
        barrier.wait()
        failures = 0
        while not a.done and time.perf_counter() < deadline and len(completions) < args.votes:
            try:
                resp = a.judge()
            except (Failure, OSError, http.client.HTTPException) as exc:
                with lock:
                    errors.append(f"{a.username}: {exc}")
                failures += 1
                if failures > 20:
                    return
                try:
                    a.start()
                except (Failure, OSError, http.client.HTTPException) as again:
                    with lock:
                        errors.append(f"{a.username}: restart: {again}")
                continue
            with lock:
                completions.append(time.perf_counter())
                latencies.append(resp.seconds)
            if args.think:
                time.sleep(a.rng.uniform(0.5, 1.5) * args.think)

    threads = [threading.Thread(target=run, args=(a,), daemon=True) for a in annotators]
    for t in threads:
        t.start()
    barrier.wait()
    started = time.perf_counter()
    for t in threads:
        t.join(timeout=args.duration + 120)
    elapsed = time.perf_counter() - started
    for a in annotators:
        a.browser.close()
    return ConcurrentResult(elapsed, completions, latencies, errors, annotators, 0, 0, 0, started)


# The parts of an MRB-shaped item as plain rows (prompt = [image, text],
# responses = [text], [text]): the bench writes 20,000 of them at once.
MRB_PART_FIELDS = ("item_id", "slot", "position", "kind", "text", "image_id", "source_path")


def mrb_part_rows(item_id: int, image_id: int, image_path: str, prompt: str, r1: str, r2: str):
    return (
        (item_id, "prompt", 0, "image", "", image_id, image_path),
        (item_id, "prompt", 1, "text", prompt, None, ""),
        (item_id, "response_1", 0, "text", r1, None, ""),
        (item_id, "response_2", 0, "text", r2, None, ""),
    )


if __name__ == "__main__":
    sys.exit(main())
