"""One consistent view of the database for the reads of a release build
(issue 29).

A build reads its members, their records and votes, the manifest's
figures and each benchmark's files in many queries over seconds to minutes. Read
each in its own transaction and an item agreed between two of them is in
one list and missing from the other (the build failed with KeyError while
annotators voted). Inside `read_snapshot()` every query sees the database as
it was at the first one:

- PostgreSQL: one transaction at REPEATABLE READ, READ ONLY (psycopg's
  public API through Django: `SET TRANSACTION` as the first statement of
  `transaction.atomic()`). Nothing is locked: voters go on at full speed.
- SQLite: one deferred read transaction (a plain `BEGIN`; Django's own
  `atomic()` here is BEGIN IMMEDIATE, which would take the write lock for
  the whole build and stop every vote). Under WAL, writers go on while it is
  open; it is rolled back at the end (it wrote nothing).

Writes are not allowed inside (READ ONLY on PostgreSQL; a write would take
SQLite's write lock for the rest of the build): the build's heartbeat and
progress go through curation.releases.heartbeat, on another connection, so
the release page sees them at once. See docs/decisions.md (issue 29).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import DEFAULT_DB_ALIAS, connections, transaction

log = logging.getLogger(__name__)


def can_take_snapshot(using: str = DEFAULT_DB_ALIAS) -> bool:
    """False inside a caller's transaction (an eager task in a request, a
    test): its own isolation applies, and no other transaction can begin."""
    return not connections[using].in_atomic_block


@contextmanager
def read_snapshot(using: str = DEFAULT_DB_ALIAS) -> Iterator[bool]:
    """Run the block's queries against one snapshot of the database, taken at
    its first query. Yields whether a snapshot was taken (False inside a
    caller's transaction, which then decides what the reads see)."""
    connection = connections[using]
    if not can_take_snapshot(using):
        yield False
        return
    if connection.vendor == "postgresql":
        with transaction.atomic(using=using):
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield True
        return
    if connection.vendor != "sqlite":  # settings allow no other engine
        raise NotImplementedError(f"no read snapshot on {connection.vendor}")
    with connection.cursor() as cursor:
        cursor.execute("BEGIN")  # DEFERRED: the snapshot starts at the first read
    try:
        yield True
    finally:
        try:
            with connection.cursor() as cursor:
                cursor.execute("ROLLBACK")
        except Exception:  # a broken connection ended the transaction anyway
            log.exception("could not end the build's read transaction")
            connection.close()
