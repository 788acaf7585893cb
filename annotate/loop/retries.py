"""A vote's transaction that PostgreSQL ended to break a deadlock runs again.

Two votes' transactions can wait on each other: each holds the rows its
vote wrote (its item, its session's progress-counter stripe, its verdict,
an adaptive project's refit row) while the next claim in the same
transaction may wait for a row the other holds (returning stale leases
updates their items). PostgreSQL then ends one of them with a deadlock
error (SQLSTATE 40P01); a serialization failure (40001) is the same kind of
loss. Nothing of that transaction was stored, and the vote is idempotent
per assignment, so running the whole transaction again is safe: the
annotator gets an answer, not an HTTP 500 for a vote the server dropped.
Bounded (ATTEMPTS), and only for the outermost transaction: inside a
caller's transaction the loss is the caller's to handle.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from django.db import DatabaseError, connection

T = TypeVar("T")

# Deadlock detected, serialization failure (PostgreSQL's SQLSTATEs).
LOST_TO_CONCURRENCY = frozenset({"40P01", "40001"})
ATTEMPTS = 3
_jitter = random.SystemRandom()


def lost_to_concurrency(exc: BaseException) -> bool:
    """Whether `exc` is the database ending a transaction to break a
    deadlock or a serialization conflict (the driver's error, which Django
    wraps, carries the SQLSTATE)."""
    return getattr(exc.__cause__, "sqlstate", None) in LOST_TO_CONCURRENCY


def run_again_if_lost(transaction_work: Callable[[], T]) -> T:
    """transaction_work() (one whole transaction of its own), run again
    when the database ended it to break a deadlock, up to ATTEMPTS times
    with a short random pause (the two sides would otherwise meet again)."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return transaction_work()
        except DatabaseError as exc:
            if attempt == ATTEMPTS or connection.in_atomic_block or not lost_to_concurrency(exc):
                raise
            time.sleep(_jitter.uniform(0, 0.01 * attempt))
    raise AssertionError("unreachable")
