"""Real processes for the fault tests: gunicorn and Celery workers started on
the test database, a TCP proxy the test can cut, and an annotator that
speaks HTTP the way the compare page does.

Everything binds 127.0.0.1 on a port the OS picks, and every process is
stopped by the test that started it (only by its own pid)."""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import requests
from django.conf import settings
from django.db import connection
from django.test import Client

from tests.fresh_process import REPO, SETTINGS_VARIABLES

BIN = Path(sys.executable).parent
HOST = "127.0.0.1"


# --- Environment ----------------------------------------------------------------------------


def database_url(*, host: str | None = None, port: int | None = None) -> str:
    """The test database (pytest-django's test_<name>), optionally through a proxy."""
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{host or db['HOST']}:{port or db['PORT']}/{db['NAME']}"


def redis_address() -> tuple[str, int, str]:
    """Host, port and database path of REDIS_URL."""
    parts = urlsplit(os.environ["REDIS_URL"])
    return parts.hostname or HOST, parts.port or 6379, parts.path or "/0"


def server_env(tmp_path: Path, *, database: str | None = None, redis: str | None = None, **extra):
    """The environment of a child process: only the settings variables given
    here (the test's database, its media folder, DEBUG off); no REDIS_URL
    unless `redis` is given, so a child without it uses the filesystem broker
    in its own DATA_DIR."""
    env = {k: v for k, v in os.environ.items() if k not in SETTINGS_VARIABLES}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=database or database_url(),
        DATA_DIR=str(tmp_path / "data"),
        MEDIA_ROOT=str(settings.MEDIA_ROOT),
        DEBUG="false",
        LOG_LEVEL="WARNING",
        PYTHONPATH=str(REPO),
        **extra,
    )
    if redis:
        env["REDIS_URL"] = redis
    return env


# --- Processes ------------------------------------------------------------------------------


def die_with_parent() -> None:
    """In the child before exec: SIGKILL it when the test process dies, so a
    killed test run (a timeout) leaves no server behind (Linux prctl)."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Gunicorn:
    """gunicorn on a socket this process bound (no port race), sync workers."""

    def __init__(self, env: dict[str, str], log: Path, *, workers: int = 1, wait: bool = True):
        listener = socket.socket()
        listener.bind((HOST, 0))
        listener.listen(128)
        self.port = listener.getsockname()[1]
        self.base = f"http://{HOST}:{self.port}"
        self.log = log
        fd = listener.fileno()
        with log.open("ab") as fh:
            self.proc = subprocess.Popen(
                [
                    *(str(BIN / "gunicorn"), "config.wsgi", "--bind", f"fd://{fd}"),
                    *("--workers", str(workers), "--timeout", "60", "--graceful-timeout", "5"),
                ],
                cwd=REPO,
                env=env,
                stdout=fh,
                stderr=subprocess.STDOUT,
                pass_fds=[fd],
                preexec_fn=die_with_parent,  # its workers exit when the master is gone
            )
        listener.close()
        if wait:
            self.wait()

    def wait(self) -> None:
        """Until the server answers (several can start meanwhile)."""
        log = self.log
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gunicorn exited:\n{tail(log)}")
            try:
                if requests.get(self.base + "/accounts/login/", timeout=5).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"gunicorn did not answer:\n{tail(log)}")

    def worker_pids(self) -> list[int]:
        try:
            return [
                int(p)
                for p in Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
                .read_text()
                .split()
            ]
        except OSError:
            return []

    def stop(self) -> None:
        stop_process(self.proc, signal.SIGTERM)


class CeleryWorker:
    """`celery -A config worker` in its own process group, so the whole worker
    can be killed at once like a lost machine. Prefork, as deployed (the solo
    pool's loop never hands back a message whose worker died)."""

    def __init__(self, env: dict[str, str], log: Path, *, name: str):
        self.log = log
        with log.open("ab") as fh:
            self.proc = subprocess.Popen(
                [
                    *(str(BIN / "celery"), "-A", "config", "worker", "--loglevel", "INFO"),
                    *("--pool", "prefork", "--concurrency", "1", "--hostname", f"{name}@%h"),
                    *("--without-gossip", "--without-mingle", "--without-heartbeat"),
                ],
                cwd=REPO,
                env=env,
                stdout=fh,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=die_with_parent,
            )

    def kill(self) -> None:
        """SIGKILL the worker and its pool: nothing gets to clean up."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()


def stop_process(proc: subprocess.Popen, sig: int) -> None:
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def tail(log: Path, lines: int = 40) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def wait_for(condition, *, timeout: float, every: float = 0.1, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(
        f"timed out after {timeout:.0f} s waiting for {what() if callable(what) else what}"
    )


# --- A TCP proxy the test can cut ------------------------------------------------------------


class TcpProxy:
    """Forwards 127.0.0.1:<port> to a server. `stop()` closes the listener and
    every connection (an outage: new connections are refused); `start()`
    listens on the same port again. `cut_at(pattern)` arms a one-shot cut of
    the connection whose client next sends `pattern`: before the server sees
    it (`deliver=False`), or after the server answered it but before the
    client gets the answer (`deliver=True`)."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.port = 0
        self.lock = threading.Lock()
        self.pairs: list[tuple[socket.socket, socket.socket]] = []
        self.listener: socket.socket | None = None
        self.pattern: bytes | None = None
        self.deliver = False
        self.cuts = 0
        self.start()

    def start(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((HOST, self.port))
        listener.listen(128)
        self.port = listener.getsockname()[1]
        self.listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def stop(self) -> None:
        listener, self.listener = self.listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        with self.lock:
            pairs, self.pairs = self.pairs, []
        for pair in pairs:
            self._close(pair)

    def cut_at(self, pattern: bytes, *, deliver: bool) -> None:
        with self.lock:
            self.pattern, self.deliver = pattern, deliver

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            pair = (client, upstream)
            with self.lock:
                self.pairs.append(pair)
            threading.Thread(target=self._pump, args=(pair,), daemon=True).start()

    def _pump(self, pair: tuple[socket.socket, socket.socket]) -> None:
        client, upstream = pair
        drop_next_answer = False
        try:
            while True:
                readable, _, _ = select.select([client, upstream], [], [], 1.0)
                for sock in readable:
                    data = sock.recv(65536)
                    if not data:
                        raise ConnectionError
                    if sock is client:
                        with self.lock:
                            hit = self.pattern is not None and self.pattern in data
                            if hit:
                                self.pattern = None
                                self.cuts += 1
                                deliver = self.deliver
                        if hit and not deliver:
                            raise ConnectionError  # the server never sees it
                        upstream.sendall(data)
                        if hit:
                            drop_next_answer = True
                    else:
                        if drop_next_answer:
                            raise ConnectionError  # the server answered; the client never hears
                        client.sendall(data)
        except (OSError, ValueError, ConnectionError):
            pass
        finally:
            with self.lock:
                if pair in self.pairs:
                    self.pairs.remove(pair)
            self._close(pair)

    @staticmethod
    def _close(pair) -> None:
        for sock in pair:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


# --- An annotator over HTTP -------------------------------------------------------------------

CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
CORRECTNESS = re.compile(r'data-correctness="(\d)"')
ITEM_URL = re.compile(r"/a/(\d+)/$")


def session_cookie(user) -> str:
    """A logged-in session for `user`, stored in the database every server reads."""
    client = Client()
    client.force_login(user)
    return client.cookies[settings.SESSION_COOKIE_NAME].value


class Annotator:
    """Claims and judges items as the compare page does (htmx submits), on
    any of several servers that share the database."""

    def __init__(self, user, slug: str, bases: list[str], *, timeout: float = 30):
        self.user = user
        self.slug = slug
        self.bases = bases
        self.turn = 0
        self.timeout = timeout
        self.http = requests.Session()
        self.http.cookies.set(settings.SESSION_COOKIE_NAME, session_cookie(user))
        self.assignment: int | None = None
        self.token = ""
        self.correctness = False
        self.done = False
        self.acknowledged: dict[int, str] = {}  # assignment → rationale, when the server said ok
        self.seq = 0

    def base(self) -> str:
        """The next server, round robin: each request may land on another process."""
        self.turn += 1
        return self.bases[self.turn % len(self.bases)]

    def start(self) -> None:
        base = self.base()
        page = self.http.get(f"{base}/p/{self.slug}/", timeout=self.timeout)
        token = CSRF_INPUT.search(page.text)
        assert page.status_code == 200 and token, page.status_code
        resp = self.http.post(
            f"{base}/p/{self.slug}/work/",
            data={"csrfmiddlewaretoken": token.group(1)},
            headers={"Origin": base, "Referer": f"{base}/p/{self.slug}/"},
            allow_redirects=False,
            timeout=self.timeout,
        )
        assert resp.status_code == 302, resp.status_code
        location = resp.headers["Location"]
        match = ITEM_URL.search(location)
        if match is None:
            assert location.endswith("/work/done/"), location
            self.done = True
            return
        page = self.http.get(f"{base}/a/{match.group(1)}/", timeout=self.timeout)
        assert page.status_code == 200, page.status_code
        self.assignment = int(match.group(1))
        self.read_form(page.text)

    def read_form(self, html: str) -> None:
        token, correctness = CSRF_INPUT.search(html), CORRECTNESS.search(html)
        assert token and correctness, "the compare page has no form"
        self.token = token.group(1)
        self.correctness = correctness.group(1) == "1"

    def form(self, choice: str = "left") -> dict:
        self.seq += 1
        form = {
            "csrfmiddlewaretoken": self.token,
            "choice": choice,
            "confidence": "2",
            "rationale": f"{self.user.username} vote {self.seq}",
            "problem_reason": "",
            "active_seconds": "12",
        }
        if self.correctness:
            form.update(correct_left="yes", correct_right="no")
        return form

    def post_vote(self, form: dict) -> requests.Response:
        base = self.base()
        url = f"/a/{self.assignment}/"
        return self.http.post(
            f"{base}/a/{self.assignment}/submit/",
            data=form,
            headers={
                "HX-Request": "true",
                "HX-Current-URL": base + url,
                "HX-Target": "work",
                "Origin": base,
                "Referer": base + url,
            },
            timeout=self.timeout,
        )

    def take_answer(self, form: dict, resp: requests.Response) -> bool:
        """Record an acknowledged vote and move to the next item; False if the
        server did not acknowledge it."""
        if resp.status_code == 204 and resp.headers.get("HX-Redirect", "").endswith("/done/"):
            self.acknowledged[self.assignment] = form["rationale"]
            self.done = True
            return True
        push = ITEM_URL.search(resp.headers.get("HX-Push-Url", ""))
        if resp.status_code != 200 or push is None:
            return False
        self.acknowledged[self.assignment] = form["rationale"]
        self.assignment = int(push.group(1))
        self.read_form(resp.text)
        return True

    def vote(self, choice: str = "left") -> requests.Response:
        form = self.form(choice)
        resp = self.post_vote(form)
        assert self.take_answer(form, resp), (resp.status_code, resp.text[:300])
        return resp
