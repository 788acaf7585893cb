"""Heavy libraries are imported where they are used (issue 32's memory
targets): a web worker that has loaded the URLconf and served the login page,
and a Celery worker that has registered every task, hold none of them. Each
is checked in a fresh interpreter, whose sys.modules nothing else filled."""

import json

from tests.fresh_process import run_django

# Each costs 5-90 MB of RSS in every process that imports it (numpy 15,
# krippendorff on top of numpy, scipy.stats 86, pandas 98, pyarrow 50, PIL 5).
HEAVY = (
    "numpy",
    "scipy",
    "pandas",
    "pyarrow",
    "krippendorff",
    "PIL",
    "cleanlab",
    "crowdkit",
    "datasets",
    "sklearn",
)

REPORT = f"""
import json, sys
print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))
"""


def _heavy_after(code: str, tmp_path) -> list[str]:
    result = run_django(code + REPORT, data_dir=tmp_path, ALLOWED_HOSTS="testserver")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_urlconf_and_the_login_page_import_no_heavy_library(tmp_path):
    code = """
from django.core.management import call_command
from django.test import Client
from django.urls import get_resolver
call_command("migrate", verbosity=0)
get_resolver().url_patterns  # every view module, as a worker's first request loads them
response = Client().get("/accounts/login/")
assert response.status_code == 200 and b"password" in response.content, response.status_code
"""
    assert _heavy_after(code, tmp_path) == []


def test_a_worker_that_registered_every_task_imports_no_heavy_library(tmp_path):
    code = """
from config.celery import app
app.loader.import_default_modules()
assert "curation.tasks.build_release_task" in app.tasks
"""
    assert _heavy_after(code, tmp_path) == []


def test_the_check_sees_a_heavy_import(tmp_path):
    # The probe itself works: a module that is imported is reported.
    assert _heavy_after("import PIL.Image", tmp_path) == ["PIL"]
