"""Releases cut while annotators vote (issue 29), shared by the PostgreSQL
test and the SQLite one (which runs it in a fresh process on a WAL file).

Annotator threads vote on a project where one vote agrees an item, so the
set of included items grows with every vote (VOTES_PER_BUILD votes per build,
so the items last however fast the machine). The build runs in the calling
thread. To know exactly what was included when a build started, voting
pauses on a gate while the test reads the included set and the build
begins; the build reopens the gate the moment it has started reading
(`build._included`, its first query after the release row), and before it
writes its records it waits until more votes have been committed (the
window where the unsnapshotted build read the members once and streamed
them again). Each build must succeed and hold exactly the set read at its
start; meanwhile another connection must see its progress and heartbeat.
"""

from __future__ import annotations

import json
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import connection

from annotate.loop.service import Vote, claim_next_item, submit_judgement
from curation.models import Release, ReleaseItem, ReleaseStatus, Verdict
from curation.releases import build, exporter
from curation.releases.service import create_release, included_verdicts
from tests.factories import make_image, make_item, make_member, make_project, png_bytes

# Votes committed after a build started and before it writes its records.
VOTES_DURING_BUILD = 3
# Votes allowed per build (so a fast machine cannot use up the items).
VOTES_PER_BUILD = 8
DOMAIN = "general_preference"


def voting_project(items: int, *, agreed: int = 5):
    project = make_project(votes_per_item=1)
    domain = project.domains.get(slug=DOMAIN)
    image = make_image()
    default_storage.save(image.file, ContentFile(png_bytes()))
    made = [make_item(project, domain=domain, image=image) for _ in range(items)]
    Verdict.objects.bulk_create([Verdict(item=i, project=project) for i in made])
    voters = [make_member(project) for _ in range(3)]
    for _ in range(agreed):  # something to release from the start
        a = claim_next_item(project=project, annotator=voters[0])
        submit_judgement(assignment_id=a.pk, annotator=voters[0], vote=Vote(choice="1"))
    return project, voters


def included_ids(project) -> set[int]:
    return set(included_verdicts(project, [DOMAIN]).values_list("item_id", flat=True))


def run(project, voters, *, builds: int) -> dict:
    """Cut and build `builds` releases while `voters` vote; returns what each
    build gave and what was expected of it."""
    gate = threading.Lock()
    committed = [0]
    counted = threading.Condition()
    stop = threading.Event()
    errors: list[str] = []
    budget = threading.Semaphore(0)  # VOTES_PER_BUILD more at each build's start

    def vote(user, seed: int) -> None:
        rng = random.Random(seed)
        try:
            while not stop.is_set():
                if not budget.acquire(timeout=0.05):
                    continue
                with gate:
                    assignment = claim_next_item(project=project, annotator=user)
                    if assignment is None:
                        return
                    submit_judgement(
                        assignment_id=assignment.pk,
                        annotator=user,
                        vote=Vote(choice=rng.choice("12")),
                    )
                with counted:
                    committed[0] += 1
                    counted.notify_all()
                time.sleep(rng.uniform(0.002, 0.01))
        except BaseException as exc:  # reported by the caller
            errors.append(f"voter {user.pk}: {exc!r}")
        finally:
            connection.close()

    def wait_for_votes(at_least: int) -> None:
        with counted:
            if not counted.wait_for(lambda: committed[0] >= at_least, timeout=30):
                raise AssertionError(f"no vote was committed during the build ({errors})")

    seen_by_others: list[dict] = []
    reader = ThreadPoolExecutor(1, thread_name_prefix="other-connection")

    def as_others_see(release_id: int) -> dict:
        try:
            return Release.objects.filter(pk=release_id).values(
                "status", "progress_total", "heartbeat_at"
            )[0]
        finally:
            connection.close()

    state: dict = {}
    real_included, real_write = build._included, exporter.write_release

    def included(release):
        if state.pop("gate_held", False):
            state["votes_at_start"] = committed[0]
            budget.release(VOTES_PER_BUILD)
            gate.release()  # the build has read: voting resumes
        return real_included(release)

    def write_release(*args, **kwargs):
        wait_for_votes(state["votes_at_start"] + VOTES_DURING_BUILD)
        # Progress written before the records (the total) must reach others now.
        deadline = time.monotonic() + 10
        while True:
            row = reader.submit(as_others_see, state["release_id"]).result()
            if row["progress_total"] == len(state["expected"]) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        seen_by_others.append(row)
        return real_write(*args, **kwargs)

    build._included, exporter.write_release = included, write_release
    threads = [threading.Thread(target=vote, args=(u, n)) for n, u in enumerate(voters)]
    outcomes = []
    try:
        for t in threads:
            t.start()
        for n in range(builds):
            release = create_release(
                project=project,
                version=f"v{n}",
                notes="",
                domains=[DOMAIN],
                seed=n,
                user=None,
                enqueue=False,
            )
            gate.acquire()  # no vote is in flight now
            state.update(gate_held=True, release_id=release.pk, expected=included_ids(project))
            error = ""
            try:
                build.build_release(release_id=release.pk)
            except Exception as exc:
                error = repr(exc)
            finally:
                if state.pop("gate_held", False):  # the build never started reading
                    gate.release()
            outcomes.append(_outcome(release.pk, state["expected"], error))
    finally:
        stop.set()
        build._included, exporter.write_release = real_included, real_write
        for t in threads:
            t.join(timeout=60)
        reader.shutdown()
    return {
        "outcomes": outcomes,
        "voter_errors": errors,
        "votes": committed[0],
        "seen_by_others": [
            {**row, "heartbeat_at": row["heartbeat_at"] is not None} for row in seen_by_others
        ],
    }


def _outcome(release_id: int, expected: set[int], error: str) -> dict:
    release = Release.objects.get(pk=release_id)
    members = set(ReleaseItem.objects.filter(release=release).values_list("item_id", flat=True))
    outcome = {
        "status": release.status,
        "error": error or release.error,
        "expected": sorted(expected),
        "members": sorted(members),
        "records": -1,
        "provenance": -1,
    }
    if release.status == ReleaseStatus.READY:
        folder = Path(settings.MEDIA_ROOT) / release.folder
        outcome["records"] = len(json.loads((folder / "all_data.json").read_text()))
        outcome["provenance"] = len((folder / "provenance.jsonl").read_text().splitlines())
    return outcome
