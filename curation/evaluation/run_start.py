"""What starting any judge run shares, whether over a ready release
(judge_runs.start_judge_run) or over a project's benchmark items
(project_judging.start_project_judge_run): the checks of the endpoint and the
sending options, and the record, copied from the endpoint and queued once the
transaction commits. Each caller raises its own error class (`error`), so
its pages and endpoints keep theirs."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from curation.evaluation import media_content as media
from curation.models import JudgeEndpoint, JudgeRun, VideoAs


def check_run_options(
    *,
    endpoint: JudgeEndpoint,
    project_id: int,
    concurrency: int,
    video_as: str,
    video_frames: int,
    error: type[Exception],
) -> None:
    """Refuse, with `error`, an endpoint of another project, a concurrency
    outside 1..JUDGE_MAX_CONCURRENCY, or videos sent in a way the judge
    client does not know."""
    from curation.evaluation.judge_runs import max_concurrency

    if endpoint.project_id != project_id:
        raise error("That endpoint belongs to another project.")
    limit = max_concurrency()
    if not 1 <= concurrency <= limit:
        raise error(f"Concurrency must be between 1 and {limit}.")
    if video_as not in VideoAs.values or not media.MIN_FRAMES <= video_frames <= media.MAX_FRAMES:
        raise error(f"Videos go as frames or video, in 1 to {media.MAX_FRAMES} frames.")


def record_judge_run(
    *,
    endpoint: JudgeEndpoint,
    name: str,
    user,
    enqueue: bool,
    error: type[Exception],
    **fields,
) -> JudgeRun:
    """Create the run with the endpoint's settings as they are now (a later
    edit of the endpoint does not change a run) and `fields` (its release or
    project, options, seed and total), and queue it once the transaction
    commits. The same name submitted twice at once is refused with `error`."""
    from config.celery import enqueue_on_commit
    from curation.evaluation.tasks import judge_release_task

    with transaction.atomic():
        try:
            run = JudgeRun.objects.create(
                endpoint=endpoint,
                name=name,
                base_url=endpoint.base_url,
                model=endpoint.model,
                temperature=endpoint.temperature,
                max_tokens=endpoint.max_tokens,
                timeout_seconds=endpoint.timeout_seconds,
                created_by=user,
                **fields,
            )
        except IntegrityError:  # the same name submitted twice at once
            raise error(f"A judge run named {name!r} already exists.") from None
        if enqueue:
            enqueue_on_commit(judge_release_task, run.pk)
    return run
