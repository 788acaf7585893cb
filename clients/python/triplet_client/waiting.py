"""Waiting for the server's background work (a judge run, a mix, an
analysis): poll, report each change, stop on success, failure or timeout."""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from typing import TypeVar

from triplet_client.errors import WaitTimeout

T = TypeVar("T")


def poll_until(
    fetch: Callable[[], T],
    *,
    state: Callable[[T], Hashable],
    done: Callable[[T], bool],
    failure: Callable[[T], Exception | None],
    describe: Callable[[T], str],
    on_progress: Callable[[T], None] | None,
    poll_seconds: float,
    timeout: float | None,
) -> T:
    """fetch() until done(it) (returned) or failure(it) (raised);
    on_progress(it) sees each change of state(it); WaitTimeout (with
    describe(it)) after `timeout` seconds."""
    deadline = None if timeout is None else time.monotonic() + timeout
    seen: Hashable = object()
    while True:
        current = fetch()
        now = state(current)
        if on_progress is not None and now != seen:
            on_progress(current)
        seen = now
        problem = failure(current)
        if problem is not None:
            raise problem
        if done(current):
            return current
        if deadline is not None and time.monotonic() >= deadline:
            raise WaitTimeout(f"{describe(current)} after {timeout} s.")
        time.sleep(poll_seconds)
