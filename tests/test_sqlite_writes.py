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


def test_a_web_process_checkpoints_the_wal_in_the_background(tmp_path):
    """On the embedded SQLite file, a web process's connections leave the WAL
    to the background checkpointer (no vote's COMMIT copies the log back);
    other processes keep SQLite's automatic checkpoints."""
    from tests.fresh_process import run_django

    code = """
import threading, time
from django.db import connection
with connection.cursor() as c:
    c.execute("CREATE TABLE t (x)")
    before = c.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
connection.close()
import config.wsgi  # the web server's entry point, as gunicorn loads it
with connection.cursor() as c:
    after = c.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
    for n in range(300):
        c.execute("INSERT INTO t VALUES (?)", ["x" * 1000])
names = {t.name for t in threading.enumerate()}
from django.conf import settings
main = settings.DATABASES["default"]["NAME"]
import os
size = os.path.getsize(main)  # the rows are in the WAL only
time.sleep(2.5)  # the background thread copies them into the database file
print(before, after, "sqlite-checkpoint" in names, os.path.getsize(main) > size)
"""
    result = run_django(code, data_dir=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1000", "0", "True", "True"]
