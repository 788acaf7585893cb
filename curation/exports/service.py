"""Raw exports of a project's votes and verdicts, any time (not only in a
release): the rows, read in one streamed query each, and the file's name.
Every revision of every vote is exported (votes are append-only). Who may
export is the caller's business: the views and the API let a project's
curators and admins in, as on every curation page.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from annotate.loop import rules
from annotate.models import Domain, ItemPurpose, Judgement, Membership, Project
from curation.exports import records
from curation.models import Verdict, VerdictRank

KINDS = ("votes", "verdicts")
# Rows fetched from the database at a time.
CHUNK = 2000


def pseudonyms(project: Project) -> dict[int, str]:
    """Every member's pseudonym by user id (blank ones left out, so that
    records.pseudonym_of falls back as releases do)."""
    return dict(
        Membership.objects.filter(project=project)
        .exclude(pseudonym="")
        .values_list("user_id", "pseudonym")
    )


def export_rows(*, project: Project, kind: str, domain: Domain | None = None) -> Iterator[tuple]:
    """The rows of a `kind` export (records.COLUMNS[kind] order), of one
    domain or the whole project. A generator: nothing is read until the
    first row is asked for; then one query read in chunks of CHUNK, so
    memory and the number of queries stay the same whatever the size."""
    if kind not in KINDS:
        raise ValueError(f"unknown export {kind!r}")
    names = pseudonyms(project)
    domains = dict(Domain.objects.filter(project=project).values_list("pk", "slug"))
    record: Callable[..., tuple]
    if kind == "votes":
        # Benchmark items' votes only (issue 36: checks measure annotators).
        judgements = Judgement.objects.with_pair_answers().filter(
            assignment__item__project=project, assignment__item__purpose=ItemPurpose.BENCHMARK
        )
        if domain is not None:
            judgements = judgements.filter(assignment__item__domain=domain)
        # Each vote's revisions together, votes in claim order: the order of
        # the (assignment, revision) unique index, so no sort before the
        # first row.
        rows: QuerySet[Any, Any] = judgements.order_by("assignment_id", "revision").values_list(
            *records.VOTE_FIELDS
        )
        record = functools.partial(records.vote_record, scale=project.preference_scale)
    else:
        verdicts = Verdict.objects.filter(project=project)
        if domain is not None:
            verdicts = verdicts.filter(item__domain=domain)
        rows = verdicts.order_by("item_id").values_list(*records.VERDICT_FIELDS)
        if project.task in rules.N_SLOT_TASKS:
            with _read_transaction():
                yield from _n_slot_verdicts(
                    rows, project=project.slug, names=names, domains=domains
                )
            return
        record = records.verdict_record
    with _read_transaction():
        for row in rows.iterator(chunk_size=CHUNK):
            yield record(row, project=project.slug, names=names, domains=domains)


def _n_slot_verdicts(rows, **names) -> Iterator[tuple]:
    """A best-of-N or ranking project's verdict rows with their final
    rankings (VerdictRank, one query per CHUNK rows)."""
    chunk: list[tuple] = []

    def flush() -> Iterator[tuple]:
        ranks: dict[int, dict[int, int]] = {}
        for item_id, slot, rank in VerdictRank.objects.filter(
            verdict__item_id__in=[row[0] for row in chunk]
        ).values_list("verdict__item_id", "slot", "rank"):
            ranks.setdefault(item_id, {})[slot] = rank
        for row in chunk:
            yield records.verdict_record(row, n_slot=True, ranks=ranks.get(row[0]), **names)
        chunk.clear()

    for row in rows.iterator(chunk_size=CHUNK):
        chunk.append(row)
        if len(chunk) == CHUNK:
            yield from flush()
    yield from flush()


def _read_transaction():
    """On PostgreSQL, a transaction around the export's cursor. Outside one,
    Django declares the server-side cursor WITH HOLD, and PostgreSQL then
    computes and stores the whole result before the first row is fetched
    (8 s for 1M votes, bench/export_bench.py); inside one the rows flow as
    they are found, from one snapshot. Not on SQLite, where the settings'
    IMMEDIATE transactions would hold the write lock (every vote would wait
    for the download); its cursor reads lazily without one. (A download
    cut short closes the generator: the transaction is rolled back, having
    written nothing.)"""
    if connection.vendor == "postgresql":
        return transaction.atomic()
    return contextlib.nullcontext()


EXTENSIONS = {"csv": "csv", "jsonl": "jsonl", "parquet": "parquet"}


def export_filename(
    *,
    project: Project,
    kind: str,
    file_format: str,
    domain: Domain | None = None,
    at: datetime | None = None,
) -> str:
    """``<project>-<domain or all>-<kind>-<UTC time>.<ext>``, e.g.
    ``mrb-vqa-votes-20260301T120000Z.csv``: slugs only, so it needs no quoting."""
    at = (at or timezone.now()).astimezone(UTC)
    scope = domain.slug if domain is not None else "all"
    return f"{project.slug}-{scope}-{kind}-{at:%Y%m%dT%H%M%SZ}.{EXTENSIONS[file_format]}"
