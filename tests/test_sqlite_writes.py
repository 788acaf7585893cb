"""config.sqlite_writes: on SQLite a process's unsafe requests run one at a
time (queued on a lock, not in SQLite's sleeping busy handler); reads run
side by side."""

import threading
import time

import pytest
from django.core.exceptions import MiddlewareNotUsed
from django.db import connection
from django.http import HttpResponse
from django.test import RequestFactory

from config.sqlite_writes import SerialWritesMiddleware


def most_at_once(method: str, n: int = 4) -> int:
    running, most = 0, 0
    guard = threading.Lock()

    def view(request):
        nonlocal running, most
        with guard:
            running += 1
            most = max(most, running)
        time.sleep(0.05)
        with guard:
            running -= 1
        return HttpResponse()

    middleware = SerialWritesMiddleware(view)
    request = getattr(RequestFactory(), method.lower())("/")
    threads = [threading.Thread(target=middleware, args=(request,)) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return most


@pytest.mark.skipif(connection.vendor != "sqlite", reason="the embedded default only")
def test_writes_queue_and_reads_do_not():
    assert most_at_once("POST") == 1
    assert most_at_once("PATCH") == 1
    assert most_at_once("GET") > 1


@pytest.mark.skipif(connection.vendor == "sqlite", reason="PostgreSQL: row locks suffice")
def test_not_used_on_postgresql():
    with pytest.raises(MiddlewareNotUsed):
        SerialWritesMiddleware(lambda request: HttpResponse())
