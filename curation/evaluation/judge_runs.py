"""Running an OpenAI-compatible judge over a ready release (issue #7 item 4).

A run sends every release record (in release order; twice when the swapped
pass is on) to the endpoint from a bounded thread pool. Threads only talk
HTTP; this module's loop, in the task's own thread, stores each answer the
moment it arrives (one JudgeOutput row per item and pass), so a run killed at
any point loses at most the requests in flight: starting it again sends only
what has no stored answer yet. When every item has one, the answers become
the JSONL an uploaded predictions file would be ({ID, output} in release
order) and go through ``curation.evaluation.service.evaluate_release``, the
upload's code path, so the leaderboard scores them exactly like a file.

Requests that fail for good (every retry used up, or a 4xx that retrying will
not fix) are stored with the error and the text ``"None"``, which is what the
official judge script writes in that case; the official scorer then gives the
line its random fallback verdict. They are counted on the run page, and a
resumed run tries them again.

The calls per record are the benchmark's (the judge-call seam, optional
members of curation.benchmarks.base): `judge_calls(record, run.seed,
both_orders=…)` names them (else "original", and "swapped" when both orders
run) and `judge_call_request(…, call=, seed=)` builds each one's request
(else `judge_request`); each answer is stored under its call key. A
benchmark with `judge_unparsed` and `judge_retries` is asked again while an
answer is unparsed, at most `judge_retries` more times; the last answer and
every attempt are stored.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from datetime import timedelta
from pathlib import PurePosixPath

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotate.models import Project
from common.storage import read_stored
from curation.benchmarks import registry
from curation.evaluation import judge_client
from curation.evaluation import media_content as media
from curation.evaluation.judge_calls import BadCallKeys, ask, calls_for
from curation.evaluation.key_encryption import UndecryptableKey, origin_of
from curation.evaluation.run_start import check_run_options, record_judge_run
from curation.evaluation.service import EvaluationError, evaluate
from curation.models import (
    AuditEvent,
    Evaluation,
    JudgeEndpoint,
    JudgeOrder,
    JudgeOutput,
    JudgeRun,
    JudgeRunStatus,
    Release,
    ReleaseStatus,
    VideoAs,
)
from curation.models.evaluation import new_judge_seed
from curation.releases import publishing

log = logging.getLogger(__name__)


class JudgeRunError(Exception):
    pass


def _setting(name: str, default):
    # Tests shorten timeouts and backoff through the settings fixture.
    return getattr(settings, name, default)


def retry_policy() -> judge_client.RetryPolicy:
    return judge_client.RetryPolicy(
        max_retries=_setting("JUDGE_MAX_RETRIES", 5),
        backoff_base=_setting("JUDGE_BACKOFF_BASE", 1.0),
        backoff_max=_setting("JUDGE_BACKOFF_MAX", 60.0),
        retry_after_max=_setting("JUDGE_RETRY_AFTER_MAX", 120.0),
    )


def max_concurrency() -> int:
    # 64 is the ceiling of curation_judgerun_concurrency_range.
    return max(1, min(64, _setting("JUDGE_MAX_CONCURRENCY", 16)))


def stale_after() -> timedelta:
    """A running run whose loop has not written a heartbeat for this long has
    lost its worker and may be resumed."""
    return timedelta(seconds=_setting("JUDGE_STALE_SECONDS", 120))


# --- Endpoints (admins) -----------------------------------------------------------------


KEY_CLEARED_ADDRESS_CHANGED = "cleared: address changed"


def save_endpoint(
    *,
    project: Project,
    actor,
    endpoint: JudgeEndpoint | None = None,
    name: str,
    base_url: str,
    model: str,
    temperature: float | None,
    max_tokens: int,
    timeout_seconds: float,
    api_key: str = "",
    clear_api_key: bool = False,
) -> JudgeEndpoint:
    """Create or change a project's judge endpoint. An empty `api_key` keeps
    the stored one, unless the base URL's origin (scheme, host or port)
    changed: a key is only ever sent where it was entered for, so it is then
    removed (api_key_change "cleared: address changed"). `clear_api_key`
    removes it. The audit event says only whether a key is set and whether it
    changed, never the key."""
    name = name.strip()
    if not name:
        raise JudgeRunError("Give the endpoint a name.")
    clash = JudgeEndpoint.objects.filter(project=project, name=name)
    if endpoint is not None:
        clash = clash.exclude(pk=endpoint.pk)
    if clash.exists():
        raise JudgeRunError(f"An endpoint named {name!r} already exists in this project.")
    creating = endpoint is None
    if endpoint is None:
        endpoint = JudgeEndpoint(project=project)
    before = {} if creating else _endpoint_state(endpoint)
    kept_key = ""
    moved = not creating and origin_of(endpoint.base_url) != origin_of(base_url)
    if endpoint.has_api_key and not moved and not api_key.strip() and not clear_api_key:
        try:  # re-sealed below: under the newest SECRET_KEY, bound to the origin
            kept_key = endpoint.api_key()
        except UndecryptableKey:
            kept_key = ""  # stays as stored; the run page asks for it again
    endpoint.name = name
    endpoint.base_url = base_url.strip()
    endpoint.model = model.strip()
    endpoint.temperature = temperature
    endpoint.max_tokens = max_tokens
    endpoint.timeout_seconds = timeout_seconds
    endpoint.updated_by = actor
    key_change = "unchanged"
    if api_key.strip():
        endpoint.set_api_key(api_key.strip())
        key_change = "replaced" if before.get("api_key") == "set" else "set"
    elif clear_api_key and endpoint.has_api_key:
        endpoint.set_api_key("")
        key_change = "cleared"
    elif moved and endpoint.has_api_key:
        endpoint.set_api_key("")
        key_change = KEY_CLEARED_ADDRESS_CHANGED
    elif kept_key:
        endpoint.set_api_key(kept_key)
    with transaction.atomic():
        endpoint.save()
        AuditEvent.objects.create(
            project=project,
            actor=actor,
            action="judge_endpoint_created" if creating else "judge_endpoint_changed",
            before=before,
            after={**_endpoint_state(endpoint), "api_key_change": key_change},
        )
    return endpoint


def delete_endpoint(*, endpoint: JudgeEndpoint, actor) -> None:
    with transaction.atomic():
        AuditEvent.objects.create(
            project=endpoint.project,
            actor=actor,
            action="judge_endpoint_deleted",
            before=_endpoint_state(endpoint),
        )
        endpoint.delete()


def _endpoint_state(endpoint: JudgeEndpoint) -> dict:
    return {
        "name": endpoint.name,
        "base_url": endpoint.base_url,
        "model": endpoint.model,
        "temperature": endpoint.temperature,
        "max_tokens": endpoint.max_tokens,
        "timeout_seconds": endpoint.timeout_seconds,
        "api_key": "set" if endpoint.has_api_key else "not set",
    }


# --- Runs (curators) --------------------------------------------------------------------


def start_judge_run(
    *,
    release: Release,
    endpoint: JudgeEndpoint,
    name: str,
    swapped: bool,
    concurrency: int,
    user,
    enqueue: bool = True,
    scoring: str | None = None,
    video_as: str = VideoAs.FRAMES,
    video_frames: int = media.DEFAULT_FRAMES,
) -> JudgeRun:
    """Record a run of `endpoint` over a ready release and queue it once the
    transaction commits. `scoring` names the benchmark whose items are judged
    and whose rules score the answers (curation.benchmarks); by default the
    release's most specific one (registry.default_for). Some benchmarks
    always send both orders (`judge_both_orders`). `video_as` and
    `video_frames`: how videos are sent (curation.evaluation.media_content)."""
    name = name.strip()
    if not name:
        raise JudgeRunError("Name the run: the name it will have on the leaderboard.")
    if release.status != ReleaseStatus.READY:
        raise JudgeRunError("Only ready releases can be judged.")
    check_run_options(
        endpoint=endpoint,
        project_id=release.project_id,
        concurrency=concurrency,
        video_as=video_as,
        video_frames=video_frames,
        error=JudgeRunError,
    )
    if Evaluation.objects.filter(release=release, name=name).exists():
        raise JudgeRunError(f"{name!r} is already on this release's leaderboard.")
    if JudgeRun.objects.filter(release=release, name=name).exists():
        raise JudgeRunError(f"A judge run named {name!r} already exists for this release.")
    benchmark = registry.default_for(release) if scoring is None else None
    if scoring is not None:
        if scoring not in registry.known_keys():
            raise JudgeRunError(f"Unknown scoring {scoring!r}.")
        benchmark = registry.get(scoring)
    if benchmark is None or not benchmark.in_release(release):
        raise JudgeRunError(
            benchmark.missing_message(release)
            if benchmark
            else "This release has nothing to judge."
        )
    swapped = swapped or benchmark.judge_both_orders
    seed = new_judge_seed()
    try:
        if hasattr(benchmark, "judge_calls"):
            records = benchmark.judge_records(release)
            total = sum(len(calls_for(benchmark, r, seed, swapped)) for r in records)
        else:
            total = benchmark.judge_item_count(release) * (2 if swapped else 1)
    except EvaluationError as exc:
        raise JudgeRunError(str(exc)) from None
    return record_judge_run(
        endpoint=endpoint,
        name=name,
        user=user,
        enqueue=enqueue,
        error=JudgeRunError,
        release=release,
        swapped=swapped,
        seed=seed,
        scoring=benchmark.key,
        concurrency=concurrency,
        video_as=video_as,
        video_frames=video_frames,
        progress_total=total,
    )


def cancel_judge_run(*, run: JudgeRun) -> bool:
    """Stop a pending or running run; the running loop notices within a
    second or so and stops sending. Answers already stored are kept."""
    return bool(
        JudgeRun.objects.filter(
            pk=run.pk, status__in=[JudgeRunStatus.PENDING, JudgeRunStatus.RUNNING]
        ).update(status=JudgeRunStatus.CANCELLED, finished_at=timezone.now())
    )


def resume_judge_run(*, run: JudgeRun, enqueue: bool = True) -> bool:
    """Queue a failed or cancelled run again, or one whose worker died (no
    heartbeat for `stale_after()`). Stored answers are not sent again."""
    from config.celery import enqueue_on_commit
    from curation.evaluation.tasks import judge_release_task

    with transaction.atomic():
        resumable = JudgeRun.objects.filter(
            pk=run.pk, status__in=[JudgeRunStatus.FAILED, JudgeRunStatus.CANCELLED]
        ).update(status=JudgeRunStatus.PENDING, error="", finished_at=None)
        if not resumable:
            resumable = JudgeRun.objects.filter(
                pk=run.pk,
                status=JudgeRunStatus.RUNNING,
                heartbeat_at__lt=timezone.now() - stale_after(),
            ).update(status=JudgeRunStatus.PENDING, error="")
        if resumable and enqueue:
            enqueue_on_commit(judge_release_task, run.pk)
    return bool(resumable)


def is_stale(run: JudgeRun) -> bool:
    return (
        run.status == JudgeRunStatus.RUNNING
        and run.heartbeat_at is not None
        and run.heartbeat_at < timezone.now() - stale_after()
    )


def _take(run_id: int, *, take_over: bool) -> bool:
    """One-shot transition to running: a pending run, or (take_over: the
    task's message was redelivered after its worker died) a running one whose
    heartbeat is stale. A live run's heartbeat is never stale, so two loops
    never work on one run."""
    now = timezone.now()
    taken = JudgeRun.objects.filter(pk=run_id, status=JudgeRunStatus.PENDING).update(
        status=JudgeRunStatus.RUNNING, started_at=now, heartbeat_at=now, error=""
    )
    if not taken and take_over:
        taken = JudgeRun.objects.filter(
            pk=run_id, status=JudgeRunStatus.RUNNING, heartbeat_at__lt=now - stale_after()
        ).update(heartbeat_at=now, error="")
    return bool(taken)


def _fail(run_id: int, message: str) -> None:
    JudgeRun.objects.filter(pk=run_id, status=JudgeRunStatus.RUNNING).update(
        status=JudgeRunStatus.FAILED, error=message[:2000], finished_at=timezone.now()
    )


def run_judge(
    *, run_id: int, take_over: bool = False, policy: judge_client.RetryPolicy | None = None
) -> JudgeRun:
    """Judge every release record that has no stored answer yet, then turn
    the answers into an evaluation. Idempotent: a run that is not pending
    (or, with take_over, stale) is returned as it is."""
    if not _take(run_id, take_over=take_over):
        return JudgeRun.objects.get(pk=run_id)
    run = JudgeRun.objects.select_related("release", "project", "endpoint").get(pk=run_id)
    key = ""
    try:
        endpoint = _client_endpoint(run)
        key = endpoint.api_key
        records, read_image = judge_inputs(run)
        if _send_missing(run, records, read_image, endpoint, policy or retry_policy()):
            _finish(run, records)
    except JudgeRunError as exc:  # a problem the page explains; nothing to trace
        _fail(run_id, str(exc))
    except Exception as exc:
        log.exception("judge run %s failed", run_id)
        _fail(run_id, judge_client.redact(f"{type(exc).__name__}: {exc}", key))
        raise
    return JudgeRun.objects.get(pk=run_id)


def _client_endpoint(run: JudgeRun) -> judge_client.Endpoint:
    stored = run.endpoint
    if stored is None:
        raise JudgeRunError("The endpoint of this run was deleted; start a new run.")
    # The key is only ever sent to the URL and model an admin saved with it.
    if stored.base_url != run.base_url or stored.model != run.model:
        raise JudgeRunError(
            "The endpoint's base URL or model changed since this run started; start a new run."
        )
    try:
        key = stored.api_key()
    except UndecryptableKey as exc:
        raise JudgeRunError(str(exc)) from None
    return judge_client.Endpoint(
        base_url=run.base_url,
        model=run.model,
        api_key=key,
        temperature=run.temperature,
        max_tokens=run.max_tokens,
        timeout=run.timeout_seconds,
        allowed_networks=tuple(settings.JUDGE_ALLOWED_NETWORKS),
    )


def judge_inputs(run: JudgeRun) -> tuple[list[dict], Callable[[str], bytes]]:
    """The records the run's benchmark judges (release order) and a reader of
    the files they name, relative to the release folder: exactly what the
    benchmark's judge script reads from a downloaded release. Read from the
    releases storage, local or a bucket; media sent as the run says. A
    project's run reads its items (curation.evaluation.project_judging)."""
    if run.on_project:
        from curation.evaluation.project_judging import project_inputs

        return project_inputs(run)
    assert run.release is not None  # curation_judgerun_release_xor_project
    try:
        records = registry.get(run.scoring).judge_records(run.release)
    except EvaluationError as exc:
        raise JudgeRunError(str(exc)) from None
    sender = media.MediaContent(media.MediaOptions.of_run(run))
    return records, media.MediaFiles(release_reader(run.release), sender)


def release_reader(release: Release) -> Callable[[str], bytes]:
    """A reader of the release's files by their path in the release folder."""
    storage = publishing.release_storage()

    def read_image(name: str) -> bytes:
        parts = PurePosixPath(name).parts
        if not parts or name.startswith("/") or ".." in parts:
            raise OSError(f"{name} is outside the release")
        return read_stored(storage, f"{release.folder}/{name}")

    return read_image


def run_calls(run: JudgeRun, record: dict) -> list[str]:
    try:
        benchmark = None if run.on_project else registry.get(run.scoring)  # project: 2 orders
        return calls_for(benchmark, record, run.seed, run.swapped)
    except BadCallKeys as exc:
        raise JudgeRunError(str(exc)) from None


def request_body(run: JudgeRun, record: dict, read_image, endpoint, order: str) -> dict:
    """The request that asks the run's judge about one record in one call
    (a pass, or one of the benchmark's call keys)."""
    benchmark = registry.get(record.get("_judge", run.scoring))  # a project's: the item's
    if hasattr(benchmark, "judge_call_request") and not run.on_project:
        return benchmark.judge_call_request(record, read_image, endpoint, call=order, seed=run.seed)
    ask_one = getattr(benchmark, "judge_project_request", None) if run.on_project else None
    swapped = order == JudgeOrder.SWAPPED
    return (ask_one or benchmark.judge_request)(record, read_image, endpoint, swapped=swapped)


def _ask(
    run: JudgeRun, record: dict, read_image, endpoint, policy, order: str, stop
) -> judge_client.JudgeResult:
    """One item, in a pool thread: no database access here."""
    try:
        body = request_body(run, record, read_image, endpoint, order)
    except OSError as exc:
        name = record.get("Image") or exc.filename or "of the pair"
        why = exc.why if isinstance(exc, media.MediaUnreadable) else type(exc).__name__
        return judge_client.JudgeResult(
            output=judge_client.OFFICIAL_FAILURE_OUTPUT,
            error=f"file {name!r} unreadable: {why}",
            attempts=0,
            seconds=0.0,
        )
    return ask(registry.get(record.get("_judge", run.scoring)), body, endpoint, policy, stop)


def _send_missing(run: JudgeRun, records, read_image, endpoint, policy) -> bool:
    """Send what has no successful answer yet; True when every item and pass
    has an answer (success or final error) and the run is still running."""
    answered = set(
        JudgeOutput.objects.filter(run=run, error="").values_list("external_id", "order")
    )
    calls = [(r, run_calls(run, r)) for r in records]
    todo = [(r, call) for r, keys in calls for call in keys if (r["ID"], call) not in answered]
    total = sum(len(keys) for _, keys in calls)
    JudgeRun.objects.filter(pk=run.pk).update(
        progress_total=total, progress_done=total - len(todo), n_errors=0
    )
    stop = threading.Event()
    max_in_row = _setting("JUDGE_MAX_CONSECUTIVE_ERRORS", 10)
    heartbeat_every = _setting("JUDGE_HEARTBEAT_SECONDS", 5.0)
    in_row = 0
    last_beat = timezone.now()
    pending: dict[Future, tuple[dict, str]] = {}
    queue = iter(todo)
    executor = ThreadPoolExecutor(max_workers=run.concurrency, thread_name_prefix="judge")
    try:
        while True:
            # Never more submitted than threads: a cancel then stops within the
            # requests in flight, and no image is encoded long before it is sent.
            while not stop.is_set() and len(pending) < run.concurrency:
                job = next(queue, None)
                if job is None:
                    break
                future = executor.submit(
                    _ask, run, job[0], read_image, endpoint, policy, job[1], stop
                )
                pending[future] = job
            if not pending:
                break
            finished, _ = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
            for future in finished:
                record, order = pending.pop(future)
                try:
                    result = future.result()
                except judge_client.Stopped:
                    continue
                except judge_client.FatalEndpointError as exc:
                    stop.set()
                    _fail(run.pk, f"The endpoint refused the request: {exc}")
                    continue
                _store(run, record["ID"], order, result)
                in_row = in_row + 1 if result.error else 0
                if in_row >= max_in_row and not stop.is_set():
                    stop.set()
                    _fail(
                        run.pk,
                        f"Stopped after {in_row} requests in a row failed (last: {result.error}). "
                        "The answers received are kept; resume when the endpoint works again.",
                    )
            now = timezone.now()
            if (now - last_beat).total_seconds() >= heartbeat_every or finished:
                last_beat = now
                # The heartbeat doubles as the cancel check: a run someone
                # cancelled (or failed above) is no longer `running`.
                alive = JudgeRun.objects.filter(pk=run.pk, status=JudgeRunStatus.RUNNING).update(
                    heartbeat_at=now
                )
                if not alive:
                    stop.set()
    finally:
        stop.set()
        executor.shutdown(wait=True, cancel_futures=True)
    return JudgeRun.objects.filter(pk=run.pk, status=JudgeRunStatus.RUNNING).exists()


def _store(run: JudgeRun, external_id: str, order: str, result: judge_client.JudgeResult) -> None:
    with transaction.atomic():
        JudgeOutput.objects.update_or_create(
            run=run,
            external_id=external_id,
            order=order,
            defaults={
                "output": result.output,
                "error": result.error,
                "attempts": result.attempts,
                "seconds": result.seconds,
            },
        )
        # Conditional on `running`: a cancelled run's counters stay as they were.
        JudgeRun.objects.filter(pk=run.pk, status=JudgeRunStatus.RUNNING).update(
            progress_done=F("progress_done") + 1,
            n_errors=F("n_errors") + (1 if result.error else 0),
        )


def run_outputs(run: JudgeRun) -> dict[tuple[str, str], str]:
    """The run's stored answers by (ID, order)."""
    return {
        (external_id, order): text
        for external_id, order, text in JudgeOutput.objects.filter(run=run).values_list(
            "external_id", "order", "output"
        )
    }


class _Overtaken(Exception):
    pass


def _evaluate(run: JudgeRun, records: list[dict]) -> Evaluation:
    """The answers as the predictions file the run's benchmark reads, scored
    through the upload's own path (curation.evaluation.service.evaluate)."""
    benchmark = registry.get(run.scoring)
    upload = benchmark.judge_predictions(run_outputs(run), records, run)
    assert run.release is not None  # a project's run never gets here (_finish)
    return evaluate(
        release=run.release, benchmark=benchmark, name=run.name, upload=upload, user=run.created_by
    )


def _finish(run: JudgeRun, records: list[dict]) -> None:
    if run.on_project:  # its answers become votes, not a leaderboard entry
        from curation.evaluation.project_judging import finish_project_run

        finish_project_run(run, records)
        return
    try:
        with transaction.atomic():
            evaluation = _evaluate(run, records)
            done = JudgeRun.objects.filter(pk=run.pk, status=JudgeRunStatus.RUNNING).update(
                status=JudgeRunStatus.COMPLETE,
                evaluation=evaluation,
                finished_at=timezone.now(),
                progress_done=F("progress_total"),
            )
            if not done:  # cancelled at the last moment: no evaluation
                raise _Overtaken
    except _Overtaken:
        return
    except EvaluationError as exc:
        _fail(run.pk, f"Scoring failed: {exc}")
