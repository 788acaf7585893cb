"""What the e2e tests' browser (tests/e2e/conftest.py) leaves behind: no
event loop marked as running, Django's async-safety check back on, and no
database connection that connections.close_all() cannot reach (a forked
child found one its parent had not closed)."""

import asyncio
import os

import pytest
from django.contrib.auth.models import User
from django.db import connection

from tests.e2e.conftest import chromium_path, running_browser


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


@pytest.mark.django_db(transaction=True)
def test_the_browser_leaves_no_running_loop_and_no_hidden_connection():
    path = chromium_path()
    if path is None:
        pytest.skip("needs Chromium (apt-get install chromium)")
    unsafe = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    User.objects.create(username="before")  # a connection from before the browser
    with running_browser(path) as browser:
        page = browser.new_page()
        page.set_content("<p>hello</p>")
        assert page.inner_text("p") == "hello"
        assert _loop_running()  # what Playwright's sync API does
        assert User.objects.filter(username="before").exists()  # the ORM still works
        page.close()
        assert connection.connection is not None
    assert not _loop_running()
    assert os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE") == unsafe
    # Neither the connection from before nor the one used beside the loop
    # is left open where close_all() no longer sees it.
    assert connection.connection is None

    async def beside_a_loop() -> bool:  # where the one used beside the loop is kept
        return connection.connection is None

    assert asyncio.run(beside_a_loop())
    assert User.objects.filter(username="before").exists()
