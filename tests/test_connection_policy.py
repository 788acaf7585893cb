"""Database connections outlive a request (issue 32): the embedded SQLite
default and PostgreSQL keep each thread's connection for DB_CONN_MAX_AGE
seconds with health checks, and under threads (gunicorn gthread) each thread
has its own connection, reused from one request to the next."""

import json

import pytest

from tests.fresh_process import run_django

POSTGRES_URL = "postgres://triplet@db.example:5432/triplet"

POLICY = """
import json
from django.conf import settings
db = settings.DATABASES["default"]
print(json.dumps([db["CONN_MAX_AGE"], db["CONN_HEALTH_CHECKS"]]))
"""

# Requests through the WSGI application (as gunicorn calls it, so Django
# opens and closes connections as in production) in two threads, three each,
# in turn: how many SQLite connections were opened.
REQUESTS = """
import json, threading
from wsgiref.util import setup_testing_defaults
from django.core.management import call_command
from django.core.wsgi import get_wsgi_application
from django.db import connection
from django.db.backends.signals import connection_created
call_command("migrate", verbosity=0)
connection.close()
application = get_wsgi_application()
opened = []
connection_created.connect(
    lambda sender, connection, **kw: opened.append(id(connection)), weak=False
)

def requests():
    for _ in range(3):
        environ = {"PATH_INFO": "/healthz", "REQUEST_METHOD": "GET"}
        setup_testing_defaults(environ)
        status = []
        response = application(environ, lambda s, headers: status.append(s))
        b"".join(response)
        response.close()
        assert status[0].startswith("200"), status

for _ in range(2):
    t = threading.Thread(target=requests)
    t.start()
    t.join()
print(json.dumps(len(opened)))
"""


def _run(tmp_path, code, **env):
    result = run_django(code, data_dir=tmp_path, **env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("env", [{}, {"DATABASE_URL": POSTGRES_URL}], ids=["sqlite", "postgres"])
def test_connections_are_kept_with_health_checks(tmp_path, env):
    assert _run(tmp_path, POLICY, **env) == [60, True]
    assert _run(tmp_path, POLICY, DB_CONN_MAX_AGE="0", **env) == [0, True]


def test_embedded_sqlite_keeps_one_connection_per_thread_across_requests(tmp_path):
    # Two threads, three requests each: one connection opened per thread.
    assert _run(tmp_path, REQUESTS) == 2
    # As before the change: every request opened its own.
    assert _run(tmp_path, REQUESTS, DB_CONN_MAX_AGE="0") == 6
