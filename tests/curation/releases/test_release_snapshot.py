"""A release is a snapshot (issue 29): releases cut while annotators vote
all succeed and hold exactly the items included when their build started
(tests/curation/releases/snapshot_scenario.py). Before, the build listed
the members in one query and streamed them in another, and an item agreed
in between failed it with KeyError."""

from __future__ import annotations

import itertools
import json

import pytest
from django.db import connection

from tests.conftest import requires_postgres
from tests.curation.releases import snapshot_scenario
from tests.fresh_process import run_django

BUILDS = 10


def check(result: dict) -> None:
    assert result["voter_errors"] == []
    failed = [o["error"] for o in result["outcomes"] if o["status"] != "ready"]
    assert failed == [], f"{len(failed)} of {BUILDS} builds failed: {failed}"
    assert len(result["outcomes"]) == BUILDS
    for n, outcome in enumerate(result["outcomes"]):
        # Exactly what was included at its start, in the records and the provenance too.
        assert outcome["members"] == outcome["expected"], f"build {n}"
        assert outcome["records"] == outcome["provenance"] == len(outcome["expected"])
    # Items were agreed during every build (the release grew from build to build) ...
    sizes = [len(o["expected"]) for o in result["outcomes"]]
    assert all(b >= a + snapshot_scenario.VOTES_DURING_BUILD for a, b in itertools.pairwise(sizes))
    # ... and the build's progress reached other connections while it read in its snapshot.
    assert [row["progress_total"] for row in result["seen_by_others"]] == sizes
    seen = result["seen_by_others"]
    assert all(row["status"] == "building" and row["heartbeat_at"] for row in seen)


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_releases_built_while_annotators_vote_all_succeed_with_the_items_of_their_start():
    assert connection.vendor == "postgresql"
    project, voters = snapshot_scenario.voting_project(items=300)
    check(snapshot_scenario.run(project, voters, builds=BUILDS))


SQLITE_CHILD = """
import json
from django.core.management import call_command
call_command("migrate", verbosity=0)
from tests.curation.releases import snapshot_scenario
project, voters = snapshot_scenario.voting_project(items=200)
print("RESULT " + json.dumps(snapshot_scenario.run(project, voters, builds=10), default=str))
"""


def test_on_sqlite_releases_built_while_annotators_vote_all_succeed_too(tmp_path):
    """The embedded default: an SQLite file in WAL mode, where one read
    transaction is the snapshot and the voters' writes go on beside it."""
    done = run_django(SQLITE_CHILD, data_dir=tmp_path, MEDIA_ROOT=str(tmp_path / "media"))
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    check(json.loads(line[len("RESULT ") :]))
