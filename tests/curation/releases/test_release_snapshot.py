"""A release is a snapshot (issue 29): releases cut while annotators vote
all succeed and hold exactly the items included when their build started
(tests/curation/releases/snapshot_scenario.py). Before, the build listed
the members in one query and streamed them in another, and an item agreed
in between failed it with KeyError."""

from __future__ import annotations

import itertools
import json
import threading
import time

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
    done = run_django(
        SQLITE_CHILD, data_dir=tmp_path, timeout=400, MEDIA_ROOT=str(tmp_path / "media")
    )
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    check(json.loads(line[len("RESULT ") :]))


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_of_a_build_reading_in_its_snapshot_reaches_other_connections(
    tmp_path, settings
):
    """The build's own connection sits in its read-only snapshot for the
    whole build; its heartbeat must still move for everyone else (or the
    sweep would take a live build for dead)."""
    from datetime import timedelta

    from curation.models import Release, ReleaseStatus
    from curation.releases.build import build_release
    from tests.curation.releases.test_releases import INCLUDED, make_release_project, new_release

    settings.RELEASE_HEARTBEAT_SECONDS = 1
    settings.RELEASE_BUILD_ITEM_DELAY = 0.2  # about 3.4 s of writing records
    release = new_release(make_release_project(tmp_path))
    seen: list = []
    build = threading.Thread(
        target=lambda: (build_release(release_id=release.pk), connection.close())
    )
    build.start()
    try:
        while build.is_alive():
            row = Release.objects.filter(pk=release.pk).values("status", "heartbeat_at")[0]
            if row["status"] == ReleaseStatus.BUILDING:
                seen.append(row["heartbeat_at"])
            time.sleep(0.1)
    finally:
        build.join(timeout=60)
    assert Release.objects.get(pk=release.pk).status == ReleaseStatus.READY
    beats = sorted(set(seen))
    assert len(beats) >= 3, beats  # it moved, about once a second
    assert max(b - a for a, b in itertools.pairwise(beats)) < timedelta(seconds=2.5)
    assert len(INCLUDED) * settings.RELEASE_BUILD_ITEM_DELAY > 3
