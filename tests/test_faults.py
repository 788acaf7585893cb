"""Faults injected into real processes, each proving that nothing is lost.

Run on the real PostgreSQL and Redis (DATABASE_URL, REDIS_URL, as `.ci/run`
sets them); skipped otherwise. Outages are simulated only with processes and
ports these tests own: a TCP proxy in front of Redis or PostgreSQL that the
test stops or cuts, and gunicorn / Celery processes the test starts and kills.
"""

from __future__ import annotations

import re
import time
import warnings
from collections import Counter
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db.models import Count, F

from annotate.models import Assignment, AssignmentStatus, ImageAsset, Item, Judgement
from config.celery import app as celery_app
from curation.models import AgreementCache, Release, ReleaseItem, ReleaseStatus, Verdict
from curation.releases.build import build_release
from curation.releases.service import create_release
from tests.conftest import requires_postgres, requires_redis
from tests.factories import make_item, make_member, make_project, png_bytes
from tests.live_servers import (
    HOST,
    Annotator,
    CeleryWorker,
    Gunicorn,
    TcpProxy,
    database_url,
    redis_address,
    server_env,
    tail,
    wait_for,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres, requires_postgres]


@pytest.fixture
def cleanup():
    """Callables run after the test, last added first (processes it started)."""
    stack: list = []
    yield stack
    for stop in reversed(stack):
        stop()


def all_bytes(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def media(name: str) -> Path:
    return Path(settings.MEDIA_ROOT) / name


def building_folders() -> list[Path]:
    from curation.releases import publishing

    root = publishing.work_root() / ".building"
    return sorted(root.iterdir()) if root.exists() else []


# Seconds before a message a dead worker took is handed to another (the test's).
VISIBILITY_TIMEOUT = 3


def purge_queue() -> None:
    """Messages other tests left in this Redis database must not reach our worker."""
    with celery_app.connection_for_write() as conn:
        conn.default_channel.queue_purge(celery_app.conf.task_default_queue)
    forget_unacked_messages()


def forget_unacked_messages() -> None:
    """Drop kombu's record of unacknowledged messages and its restore mutex.

    Workers that earlier tests killed leave both behind in this Redis
    database; a mutex left by a worker killed while restoring blocks every
    redelivery for `unacked_mutex_expire` (300 s), longer than a test waits.
    Only the test's own database (REDIS_URL) is touched."""
    with celery_app.connection_for_write() as conn:
        channel = conn.default_channel
        channel.client.delete(
            channel.unacked_mutex_key, channel.unacked_key, channel.unacked_index_key
        )


# --- The worker dies in the middle of a release build ------------------------------------------


@pytest.mark.redis
@requires_redis
def test_a_worker_killed_mid_build_leaves_no_partial_release_and_the_retry_is_identical(
    tmp_path,
):
    from tests.curation.releases.test_releases import INCLUDED, make_release_project

    project = make_release_project(tmp_path)
    release = create_release(
        project=project,
        version="v1.0",
        notes="fault test",
        domains=sorted({d.slug for d in project.domains.all()}),
        seed=7,
        user=None,
        enqueue=False,
    )
    # The uninterrupted build of the same release and data, for comparison;
    # then the release is put back to pending and its files moved away.
    reference = build_release(release_id=release.pk)
    assert reference.status == ReleaseStatus.READY, reference.error
    expected = all_bytes(media(reference.folder))
    media(reference.folder).rename(tmp_path / "reference")
    media(reference.archive).unlink()
    Release.objects.filter(pk=release.pk).update(
        status=ReleaseStatus.PENDING, sha256="", folder="", archive="", progress_done=0
    )
    ReleaseItem.objects.filter(release=release).delete()

    purge_queue()
    env = server_env(
        tmp_path,
        redis=server_env_redis(),
        CELERY_VISIBILITY_TIMEOUT=str(VISIBILITY_TIMEOUT),
        RELEASE_BUILD_ITEM_DELAY_MS="150",
    )
    first = CeleryWorker(env, tmp_path / "worker1.log", name="doomed")
    second = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the test session is eager; this goes to Redis
            celery_app.send_task("curation.tasks.build_release_task", args=[release.pk])

        def building():
            row = Release.objects.get(pk=release.pk)
            return row.status == ReleaseStatus.BUILDING and row.progress_done > 0 and row

        row = wait_for(building, timeout=40, what=lambda: f"the build to start\n{tail(first.log)}")
        first.kill()
        # Had the kill caught the worker holding kombu's restore mutex, the
        # redelivery would wait out the mutex's expiry (300 s); release it.
        with celery_app.connection_for_write() as conn:
            channel = conn.default_channel
            channel.client.delete(channel.unacked_mutex_key)
        # kombu hands back an unacknowledged message older than the visibility
        # timeout when a worker starts polling, and after that only about every
        # 100 s; start the heir once the message is old enough to be handed back.
        time.sleep(VISIBILITY_TIMEOUT + 0.5)
        row.refresh_from_db()
        # Killed in the middle: not ready, nothing published, its work folder left behind.
        assert row.status == ReleaseStatus.BUILDING
        assert 0 < row.progress_done < row.progress_total == len(INCLUDED)
        assert row.folder == row.archive == row.sha256 == ""
        assert not ReleaseItem.objects.filter(release=release).exists()
        assert [p.name.split("-")[0] for p in building_folders()] == [str(release.pk)]

        # A new worker gets the unacknowledged message back after the
        # visibility timeout, sees it was redelivered and takes the build over.
        second = CeleryWorker(env, tmp_path / "worker2.log", name="heir")

        def finished():
            row = Release.objects.get(pk=release.pk)
            return row.status in (ReleaseStatus.READY, ReleaseStatus.FAILED) and row

        row = wait_for(finished, timeout=60, what=lambda: f"the retry\n{tail(second.log)}")
    finally:
        first.kill()
        if second is not None:
            second.stop()

    assert row.status == ReleaseStatus.READY, row.error
    assert row.sha256 == reference.sha256
    assert all_bytes(media(row.folder)) == expected
    assert ReleaseItem.objects.filter(release=release).count() == len(INCLUDED)
    assert building_folders() == []  # the dead attempt's folder was removed too


@pytest.mark.redis
@requires_redis
def test_a_build_whose_worker_died_is_taken_over_by_the_heartbeat_sweep_in_seconds(tmp_path):
    """Not after the broker's hour (the message stays unacknowledged for the
    whole visibility timeout): the heir's sweep sees the dead build's
    heartbeat go stale (RELEASE_STALE_SECONDS, here 10 s) and builds it."""
    from tests.curation.releases.test_releases import INCLUDED, make_release_project

    project = make_release_project(tmp_path)
    release = create_release(
        project=project,
        version="v1.0",
        notes="",
        domains=sorted({d.slug for d in project.domains.all()}),
        seed=7,
        user=None,
        enqueue=False,
    )
    purge_queue()
    env = server_env(
        tmp_path,
        redis=server_env_redis(),
        CELERY_VISIBILITY_TIMEOUT="3600",
        RELEASE_BUILD_ITEM_DELAY_MS="150",
        RELEASE_HEARTBEAT_SECONDS="1",
        RELEASE_STALE_SECONDS="10",
        RELEASE_SWEEP_SECONDS="1",
    )
    first = CeleryWorker(env, tmp_path / "worker1.log", name="doomed")
    second = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the test session is eager; this goes to Redis
            celery_app.send_task("curation.tasks.build_release_task", args=[release.pk])

        def building():
            row = Release.objects.get(pk=release.pk)
            return row.status == ReleaseStatus.BUILDING and row.progress_done > 0 and row

        wait_for(building, timeout=40, what=lambda: f"the build to start\n{tail(first.log)}")
        first.kill()
        killed = time.monotonic()
        second = CeleryWorker(env, tmp_path / "worker2.log", name="heir")

        def finished():
            row = Release.objects.get(pk=release.pk)
            return row.status in (ReleaseStatus.READY, ReleaseStatus.FAILED) and row

        row = wait_for(finished, timeout=90, what=lambda: f"the take-over\n{tail(second.log)}")
        recovered_in = time.monotonic() - killed
    finally:
        first.kill()
        if second is not None:
            second.stop()
        forget_unacked_messages()  # the dead worker's message must not reach later tests
    assert row.status == ReleaseStatus.READY, row.error
    assert row.attempts == 2  # the dead build, then the heir's
    assert ReleaseItem.objects.filter(release=release).count() == len(INCLUDED)
    # Stale after 10 s, swept every second, rebuilt at 150 ms an item.
    assert recovered_in < 60, recovered_in
    assert building_folders() == []


def server_env_redis() -> str:
    host, port, db = redis_address()
    return f"redis://{host}:{port}{db}"


# --- Redis is down while annotators vote -----------------------------------------------------


@pytest.mark.redis
@requires_redis
def test_votes_need_no_broker_and_background_work_catches_up_when_it_returns(tmp_path, cleanup):
    project = make_project(votes_per_item=2)
    items = [make_item(project) for _ in range(4)]
    for item in items:  # the factory's images have no files; the release needs them
        default_storage.save(item.image.file, ContentFile(png_bytes()))
    annotators = [make_member(project) for _ in range(2)]
    admin = make_member(project, role="admin")

    purge_queue()
    host, port, db = redis_address()
    proxy = TcpProxy((host, port))
    broker = f"redis://{HOST}:{proxy.port}{db}"
    env = server_env(tmp_path, redis=broker)
    worker = CeleryWorker(env, tmp_path / "worker.log", name="patient")
    web = Gunicorn(env, tmp_path / "web.log")
    cleanup.extend([web.stop, worker.stop, proxy.stop])
    # The outage: the broker's address refuses connections.
    proxy.stop()
    people = [Annotator(u, project.slug, [web.base]) for u in annotators]
    timings = []
    for person in people:
        person.start()
        while not person.done:
            # Both pick response 1 and call it the correct one, whichever
            # side it was drawn on, so every item is agreed and releasable
            # ("left" for both split an item whenever their drawn orders
            # differed: in about 1 run of 16 no item was agreed).
            swapped = Assignment.objects.get(pk=person.assignment).shown_swapped
            form = person.form("right" if swapped else "left")
            if person.correctness:
                form.update(
                    correct_left="no" if swapped else "yes",
                    correct_right="yes" if swapped else "no",
                )
            started = time.perf_counter()
            resp = person.post_vote(form)
            timings.append(time.perf_counter() - started)
            assert person.take_answer(form, resp), (resp.status_code, resp.text[:300])

    # Work that must be queued: a release, an agreement refresh, thumbnails of an import.
    curator = Annotator(admin, project.slug, [web.base])
    page = curator.http.get(f"{web.base}/p/{project.slug}/releases/new/")
    token = page.text.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]
    started = time.perf_counter()
    resp = curator.http.post(
        f"{web.base}/p/{project.slug}/releases/new/",
        data={
            "csrfmiddlewaretoken": token,
            "version": "v1",
            "notes": "",
            "domains": ["vqa"],
            "seed": "1",
        },
        headers={"Origin": web.base, "Referer": page.url},
        allow_redirects=False,
    )
    timings.append(time.perf_counter() - started)
    assert resp.status_code == 302, form_errors(resp.text)
    started = time.perf_counter()
    resp = curator.http.post(
        f"{web.base}/p/{project.slug}/agreement/refresh/",
        data={"csrfmiddlewaretoken": token},
        headers={"Origin": web.base, "Referer": page.url},
        allow_redirects=False,
    )
    timings.append(time.perf_counter() - started)
    assert resp.status_code in (200, 302), resp.status_code
    imported = upload_dataset(curator, web.base, project.slug, token, timings)

    # Every vote was recorded and every verdict moved, without a broker.
    assert Judgement.objects.filter(assignment__item__project=project).count() == 8
    assert not Verdict.objects.filter(item__in=items, status="needs_votes").exists()
    for item in items:
        votes = Judgement.objects.filter(assignment__item=item, is_current=True)
        assert votes.count() == 2
    # ...and no request waited long on the missing broker.
    print("request seconds during the outage:", [round(t, 2) for t in timings])
    assert max(timings) < 5, timings
    release = Release.objects.get(project=project, version="v1")
    assert release.status == ReleaseStatus.PENDING
    assert AgreementCache.objects.get(project=project).requested_at is not None
    assert ImageAsset.objects.filter(pk__in=imported, thumbnail="").count() == len(imported)

    proxy.start()  # the broker is back: the worker reconnects and re-queues the missed work

    def caught_up():
        release.refresh_from_db()
        cache = AgreementCache.objects.get(project=project)
        thumbs = not ImageAsset.objects.filter(pk__in=imported, thumbnail="").exists()
        return release.status == ReleaseStatus.READY and cache.requested_at is None and thumbs

    wait_for(caught_up, timeout=60, every=0.5, what=lambda: f"catch-up\n{tail(worker.log)}")
    assert AgreementCache.objects.get(project=project).computed_at is not None

    # The web process that saw the outage queues work again at once.
    resp = curator.http.post(
        f"{web.base}/p/{project.slug}/releases/new/",
        data={"csrfmiddlewaretoken": token, "version": "v2", "domains": ["vqa"], "seed": "2"},
        headers={"Origin": web.base, "Referer": page.url},
        allow_redirects=False,
    )
    assert resp.status_code == 302, form_errors(resp.text)
    wait_for(
        lambda: Release.objects.filter(project=project, version="v2", status="ready").exists(),
        timeout=30,
        what=lambda: f"the second release\n{tail(worker.log)}",
    )


def upload_dataset(curator: Annotator, base: str, slug: str, token: str, timings) -> list[int]:
    """Import two items with new images through the upload page; their thumbnails
    are queued for the worker. Returns the new images' primary keys."""
    import json

    before = set(ImageAsset.objects.values_list("pk", flat=True))
    records = [
        {
            "ID": f"vqa_up_{n}",
            "Text": f"What colour is shape {n}?",
            "Image": f"up_{n}.png",
            "Output1": "Red.",
            "Output2": "Blue.",
            "Better": "Output1",
            "Category": "vqa",
        }
        for n in range(2)
    ]
    import io
    import zipfile

    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("data.json", json.dumps(records))
        for n in range(2):
            zf.writestr(f"up_{n}.png", png_bytes(size=(600, 400), color=(40 * n, 200, 90)))
    started = time.perf_counter()
    resp = curator.http.post(
        f"{base}/p/{slug}/import/",
        data={"csrfmiddlewaretoken": token, "format": "", "domain": "", "field_map": ""},
        files={"dataset": ("dataset.zip", archive.getvalue(), "application/zip")},
        headers={"Origin": base, "Referer": f"{base}/p/{slug}/import/"},
        allow_redirects=False,
    )
    timings.append(time.perf_counter() - started)
    assert resp.status_code == 302, resp.text[:2000]
    new = sorted(set(ImageAsset.objects.values_list("pk", flat=True)) - before)
    assert len(new) == 2
    return new


# --- The database connection drops during a vote ----------------------------------------------


def test_a_vote_cut_off_from_the_database_fails_fast_and_its_retry_counts_once(tmp_path):
    project = make_project(votes_per_item=1)
    for _ in range(4):
        make_item(project)
    user = make_member(project)
    proxy = TcpProxy((database_url_host(), database_url_port()))
    env = server_env(
        tmp_path, database=database_url(host=HOST, port=proxy.port), DB_CONN_MAX_AGE="60"
    )
    web = Gunicorn(env, tmp_path / "web.log")
    try:
        person = Annotator(user, project.slug, [web.base], timeout=20)
        person.start()
        for deliver in (False, True):
            # deliver=False: the COMMIT never reaches PostgreSQL (rolled back);
            # deliver=True: it commits, but the answer never reaches the app.
            assignment = person.assignment
            form = person.form("right")
            proxy.cut_at(b"COMMIT", deliver=deliver)
            started = time.perf_counter()
            resp = person.post_vote(form)
            seconds = time.perf_counter() - started
            assert proxy.cuts == (2 if deliver else 1)
            assert resp.status_code >= 500, resp.status_code
            assert seconds < 5, seconds
            stored = Judgement.objects.filter(assignment_id=assignment).count()
            assert stored == (1 if deliver else 0)
            # The person sends the same vote again: it is stored exactly once.
            resp = person.post_vote(form)
            assert person.take_answer(form, resp), (resp.status_code, resp.text[:300])
            assert Judgement.objects.filter(assignment_id=assignment).count() == 1
            assert Assignment.objects.get(pk=assignment).status == AssignmentStatus.SUBMITTED
    finally:
        web.stop()
        proxy.stop()
    assert (
        Item.objects.filter(project=project).aggregate(n=Count("assignments__judgements"))["n"] == 2
    )


def database_url_host() -> str:
    from django.db import connection

    return connection.settings_dict["HOST"] or HOST


def database_url_port() -> int:
    from django.db import connection

    return int(connection.settings_dict["PORT"] or 5432)


# --- Two web processes serve the same annotators at once ----------------------------------------


def test_two_web_processes_never_over_assign_and_store_every_acknowledged_vote_once(tmp_path):
    import threading

    project = make_project(votes_per_item=3)
    for _ in range(8):
        make_item(project)
    users = [make_member(project) for _ in range(5)]
    env = server_env(tmp_path)
    webs = [Gunicorn(env, tmp_path / f"web{n}.log", wait=False) for n in (1, 2)]
    for web in webs:
        web.wait()
    errors: list[str] = []
    people = [Annotator(u, project.slug, [w.base for w in webs]) for u in users]
    try:

        def work(person: Annotator) -> None:
            try:
                person.start()
                while not person.done:
                    person.vote("left" if person.seq % 2 else "right")
            except Exception as exc:  # reported below with the others
                errors.append(f"{person.user.username}: {exc!r}")

        threads = [threading.Thread(target=work, args=(p,)) for p in people]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
    finally:
        for web in webs:
            web.stop()
    assert errors == []
    acknowledged = Counter()
    for person in people:
        for assignment, rationale in person.acknowledged.items():
            acknowledged[(assignment, rationale)] += 1
    stored = Counter(
        Judgement.objects.filter(assignment__item__project=project).values_list(
            "assignment_id", "rationale"
        )
    )
    assert stored == acknowledged  # every acknowledged vote exactly once, nothing else
    # Every item got its 3 votes, and none more than it needs (an A-vs-B split
    # escalates to 5; people who find nothing left to claim may stop before).
    needed = dict(Item.objects.filter(project=project).values_list("pk", "votes_needed"))
    votes = Counter(
        Judgement.objects.filter(assignment__item__project=project, is_current=True).values_list(
            "assignment__item_id", flat=True
        )
    )
    assert set(votes) == set(needed)
    assert all(3 <= votes[item] <= needed[item] for item in needed), (votes, needed)
    assert not Item.objects.filter(project=project, live_assignments__gt=F("votes_needed")).exists()
    taken = Counter(
        Assignment.objects.filter(item__project=project)
        .exclude(status=AssignmentStatus.SKIPPED)
        .values_list("item_id", flat=True)
    )
    assert taken == votes  # every assignment handed out was judged: none duplicate or excess


# --- Abandoned leases come back with nobody claiming -----------------------------------------


@pytest.mark.redis
@requires_redis
def test_the_worker_returns_abandoned_leases_and_the_item_is_rechecked(tmp_path, cleanup):
    """The last annotator abandons an item and nobody claims again: the
    worker's lease sweep (LEASE_SWEEP_SECONDS) returns the lease and curation
    reports the item stuck instead of it waiting for good."""
    from datetime import timedelta

    from django.utils import timezone

    from annotate.loop.service import Vote, claim_next_item, submit_judgement
    from curation.verdicts.service import stuck_items

    project = make_project(votes_per_item=2)
    item = make_item(project, domain=project.domains.get(slug="general_preference"))
    Verdict.objects.create(item=item, project=project)
    first, second = make_member(project), make_member(project)
    a = claim_next_item(project=project, annotator=first)
    submit_judgement(assignment_id=a.pk, annotator=first, vote=Vote(choice="1"))
    lease = claim_next_item(project=project, annotator=second)
    past = timezone.now() - timedelta(minutes=5)
    Assignment.objects.filter(pk=lease.pk).update(
        claimed_at=past, lease_expires_at=past + timedelta(seconds=1)
    )
    purge_queue()
    env = server_env(tmp_path, redis=server_env_redis(), LEASE_SWEEP_SECONDS="1")
    worker = CeleryWorker(env, tmp_path / "worker.log", name="sweeper")
    cleanup.append(worker.stop)
    wait_for(
        lambda: Assignment.objects.get(pk=lease.pk).status == AssignmentStatus.EXPIRED,
        timeout=60,
        what=f"the lease sweep\n{tail(tmp_path / 'worker.log')}",
    )
    assert [i.pk for i in stuck_items(project)] == [item.pk]


def form_errors(html: str) -> str:
    """The error lists of a refused form (the page's head says nothing)."""
    found = re.findall(r'<ul class="errorlist[^"]*"[^>]*>.*?</ul>', html, re.S)
    return "\n".join(found) or html[-2000:]
