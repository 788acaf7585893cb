"""Celery: a real round trip through Redis (when REDIS_URL is set), the
embedded filesystem broker in a fresh process, and enqueue_on_commit."""

import json
import logging

import pytest
from celery.contrib.testing.worker import start_worker
from celery.result import EagerResult
from django.db import transaction
from kombu.exceptions import OperationalError

from config.celery import app, enqueue_on_commit, ping
from tests.conftest import requires_redis
from tests.fresh_process import run_django


class RecordingTask:
    """Stands in for a task: records `delay` calls, optionally failing like a
    broker that is down."""

    def __init__(self, error: Exception | None = None):
        self.calls: list[tuple[tuple, dict]] = []
        self.error = error

    def delay(self, *args, **kwargs):
        self.calls.append((args, kwargs))
        if self.error is not None:
            raise self.error


@pytest.fixture
def real_broker():
    """Send tasks to the configured broker instead of running them inline
    (conftest makes the session eager); keep the worker off the root logger."""
    # conftest sets the namespaced CELERY_TASK_ALWAYS_EAGER, which shadows the
    # plain key, so both spellings are switched off here and restored after.
    keys = ("task_always_eager", "CELERY_TASK_ALWAYS_EAGER", "worker_hijack_root_logger")
    saved = {key: app.conf.get(key) for key in keys}
    app.conf.update(
        task_always_eager=False, CELERY_TASK_ALWAYS_EAGER=False, worker_hijack_root_logger=False
    )
    yield app
    app.conf.update(saved)


@pytest.mark.redis
@requires_redis
def test_task_round_trips_through_redis_and_an_embedded_worker(real_broker):
    assert real_broker.conf.broker_url.startswith("redis://")
    with start_worker(real_broker, pool="solo", perform_ping_check=False):
        result = ping.delay(41)
        assert not isinstance(result, EagerResult)
        assert result.get(timeout=10) == 41


FILESYSTEM_ROUND_TRIP = """
import json
from pathlib import Path
from celery.contrib.testing.worker import start_worker
from celery.result import EagerResult
from config.celery import app, ping

app.conf.worker_hijack_root_logger = False
with app.connection() as connection:
    connection.ensure_connection(max_retries=1)
    transport = connection.transport_cls
queue = Path(app.conf.broker_transport_options["data_folder_out"])
result = ping.delay(41)
queued = [path.read_text() for path in queue.iterdir()]
with start_worker(app, pool="solo", perform_ping_check=False):
    answer = result.get(timeout=20)
left = list(queue.iterdir())
print(json.dumps({"transport": transport, "queued": queued, "answer": answer, "left": len(left)}))
"""


def test_task_round_trips_through_the_filesystem_broker_without_servers(tmp_path):
    result = run_django(FILESYSTEM_ROUND_TRIP, data_dir=tmp_path)
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome["transport"] == "filesystem"
    # The message waited as a file in DATA_DIR until the worker took it.
    assert len(outcome["queued"]) == 1
    assert "triplet_studio.ping" in outcome["queued"][0]
    assert outcome["answer"] == 41
    assert outcome["left"] == 0


@pytest.mark.django_db
def test_enqueue_on_commit_sends_the_task_only_when_the_transaction_commits(
    django_capture_on_commit_callbacks,
):
    task = RecordingTask()
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        enqueue_on_commit(task, 7, release_id=3)
        assert task.calls == []
    assert len(callbacks) == 1
    assert task.calls == [((7,), {"release_id": 3})]


@pytest.mark.django_db(transaction=True)
def test_enqueue_on_commit_sends_nothing_when_the_transaction_rolls_back():
    task = RecordingTask()
    with pytest.raises(RuntimeError), transaction.atomic():
        enqueue_on_commit(task, 7)
        raise RuntimeError("the change failed")
    with transaction.atomic():
        enqueue_on_commit(task, 8)
        assert task.calls == []
    assert task.calls == [((8,), {})]


@pytest.mark.django_db(transaction=True)
def test_broker_failure_after_commit_is_logged_not_raised(caplog):
    task = RecordingTask(error=OperationalError("broker unreachable"))
    caplog.set_level(logging.ERROR, logger="django.db.backends.base")
    with transaction.atomic():
        enqueue_on_commit(task, 7)
    assert task.calls == [((7,), {})]
    assert "broker unreachable" in caplog.text


# Every task's name as queued messages carry it. Tasks are pinned with name=
# so a module move (issue 18) cannot orphan a message already in the broker.
TASK_NAMES = {
    "annotate.tasks.make_thumbnails",
    "annotate.tasks.derive_media",
    "annotate.tasks.render_part_html",
    "annotate.tasks.requeue_missing_thumbnails",
    "annotate.tasks.expire_stale_leases_everywhere",
    "curation.tasks.refresh_agreement",
    "curation.tasks.refresh_calibration",
    "curation.tasks.build_release_task",
    "curation.tasks.build_mix_task",
    "curation.tasks.requeue_unsent_work",
    "curation.tasks.recover_stalled_builds",
    "curation.tasks.judge_release_task",
    "curation.tasks.compute_label_quality_task",
    "curation.tasks.refit_adaptive_task",
    "triplet_studio.ping",
}


def test_task_names_are_pinned():
    app.loader.import_default_modules()
    registered = {name for name in app.tasks if not name.startswith("celery.")}
    assert registered == TASK_NAMES
