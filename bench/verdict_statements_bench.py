"""The verdict's two per-vote statements, raw SQL against plain ORM.

    .venv/bin/python bench/verdict_statements_bench.py [--items 3000] [--rounds 7] [--keep]
    .venv/bin/python bench/verdict_statements_bench.py --sqlite

A vote that completes an item moves its verdict (curation.verdicts.service.
update_verdict): it reads the item's current votes and saves the verdict.
curation.verdicts.orm has both statements in plain ORM (the reference, run
on SQLite), curation.verdicts.postgres as raw SQL (run on PostgreSQL). This
bench builds one project of --items items with 3 current votes each (a
second annotator's votes on a third of them are superseded revisions, as
revisions leave them), then, in --rounds rounds alternating the two
modules, calls item_rule_votes and save_after_vote once per item inside one
transaction and reports this process's CPU and the wall time per call
(median of the rounds). On --sqlite only the ORM runs (the raw module is
PostgreSQL's), beside the raw SQL the service ran there before issue 32 for
comparison. Tables are analysed first; --no-analyze leaves them as an
import does, which is what the index-only form of the raw read guards
against.

The script owns one database, named by DATABASE_URL (default below; the name
must start with ``bench``): dropped and created at the start, dropped at the
end unless --keep. --sqlite uses a temporary file.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import database_url, finish, recreate_database, setup_django

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_verdict_statements"

# Before issue 32 the service ran these on every database (SQLite: IN).
_OLD_SQLITE_VOTES = """
    SELECT j.choice, j.correct_1, j.correct_2, j.flagged_problem, j.strength
    FROM annotate_judgement j
    WHERE j.is_current AND j.assignment_id IN
        (SELECT a.id FROM annotate_assignment a WHERE a.item_id = %s)
"""


def build(n_items: int) -> list:
    from datetime import UTC, datetime, timedelta

    from django.contrib.auth import get_user_model
    from django.db import transaction

    from annotate.models import Assignment, Item, Judgement, Project
    from curation.models import Verdict

    t0 = datetime(2026, 1, 5, tzinfo=UTC)
    with transaction.atomic():
        project = Project.objects.create(slug="verdicts", name="Verdict statements")
        domain = project.create_default_domains()[0]
        users = get_user_model().objects.bulk_create(
            [get_user_model()(username=f"a{n}") for n in range(3)]
        )
        items = Item.objects.bulk_create(
            [
                Item(project=project, domain=domain, external_id=f"i{n}", votes_needed=3)
                for n in range(n_items)
            ],
            batch_size=2000,
        )
        assignments = Assignment.objects.bulk_create(
            [
                Assignment(
                    item=item,
                    annotator=user,
                    status="submitted",
                    shown_swapped=False,
                    claimed_at=t0,
                    lease_expires_at=t0 + timedelta(minutes=30),
                    submitted_at=t0,
                )
                for item in items
                for user in users
            ],
            batch_size=2000,
        )
        judgements = []
        for n, a in enumerate(assignments):
            if n % 9 == 1:  # a superseded revision first
                judgements.append(Judgement(assignment=a, choice="2", is_current=False))
                judgements.append(Judgement(assignment=a, choice="1", revision=2))
            else:
                judgements.append(Judgement(assignment=a, choice="1" if n % 4 else "tie"))
        Judgement.objects.bulk_create(judgements, batch_size=2000)
        Verdict.objects.bulk_create(
            [Verdict(item=item, project=project) for item in items], batch_size=2000
        )
    return [v for v in Verdict.objects.order_by("item_id")]


def measure(call, verdicts) -> tuple[float, float]:
    """(CPU µs, wall µs) per call of `call(verdict)` over `verdicts`, in one
    transaction rolled back at the end."""
    from django.db import transaction

    with transaction.atomic():
        cpu, wall = time.process_time(), time.perf_counter()
        for verdict in verdicts:
            call(verdict)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        transaction.set_rollback(True)
    return cpu / len(verdicts) * 1e6, wall / len(verdicts) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--sqlite", action="store_true")
    parser.add_argument("--no-analyze", action="store_true")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="verdict-bench-"))
    url = f"sqlite:///{tmp}/bench.sqlite3" if args.sqlite else database_url(DEFAULT_DATABASE_URL)
    if not args.sqlite:
        recreate_database(url)
    try:
        setup_django(url, tmp)
        from django.db import connection

        from curation.verdicts import orm, postgres

        verdicts = build(args.items)
        if not args.no_analyze:
            with connection.cursor() as cursor:
                cursor.execute("VACUUM ANALYZE" if connection.vendor == "postgresql" else "ANALYZE")

        def old_sqlite_votes(item_id):
            with connection.cursor() as cursor:
                cursor.execute(_OLD_SQLITE_VOTES, [item_id])
                return cursor.fetchall()

        def old_sqlite_save(verdict):
            with connection.cursor() as cursor:
                cursor.execute(
                    postgres.SAVE_AFTER_VOTE_SQL,
                    [
                        f.get_db_prep_save(f.pre_save(verdict, False), connection)
                        for f in postgres._VOTE_FIELDS
                    ]
                    + [verdict.pk],
                )

        raw = (
            ("raw (before)", lambda v: old_sqlite_votes(v.item_id), old_sqlite_save)
            if args.sqlite
            else ("raw", lambda v: postgres.item_rule_votes(v.item_id), postgres.save_after_vote)
        )
        paths = [("orm", lambda v: orm.item_rule_votes(v.item_id), orm.save_after_vote), raw]
        results: dict = {(name, what): [] for name, *_ in paths for what in ("votes", "save")}
        for _ in range(args.rounds):
            for name, votes, save in paths:
                results[name, "votes"].append(measure(votes, verdicts))
                results[name, "save"].append(measure(save, verdicts))
        print(f"{connection.vendor}, {args.items} items, {args.rounds} rounds (median per call)")
        for (name, what), runs in results.items():
            cpu = statistics.median(c for c, _ in runs)
            wall = statistics.median(w for _, w in runs)
            print(f"  {what:5} {name:12} CPU {cpu:7.1f} µs   wall {wall:7.1f} µs")
    finally:
        if args.sqlite:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
        else:
            finish(url, tmp, keep=args.keep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
