"""Judge runs over a project's benchmark items (issue 36 item 3).

The same runner as a release's run (curation.evaluation.judge_runs: its
pool, retries, heartbeat, progress, cancel and resume, and the task
`curation.tasks.judge_release_task`), with two differences it asks this
module about: the records come from the project's benchmark items (not a
release's files), built by a benchmark offering `judge_project_records`
with its own judge prompt, always in both orders; and a finished run's
answers become JudgeVote rows (the item's response each order picked, and
the judge's stated confidence, if any), not a leaderboard entry. Those
votes are never Judgements: annotators, tallies, verdicts and releases
never see them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import islice
from typing import Any

from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from annotate.models import Item, Project, Task
from common.storage import read_stored
from curation.benchmarks import registry
from curation.models import JudgeEndpoint, JudgeOutput, JudgeRun, JudgeRunStatus, JudgeVote
from curation.models.evaluation import new_judge_seed

ORDERS = ("original", "swapped")
WRITE_BATCH = 5000

# "Confidence: 0.8", "confidence = 80%", "Confidence level: 7/10" (last one wins).
CONFIDENCE = re.compile(
    r"confidence(?:\s+(?:level|score))?\s*[:=]\s*(\d+(?:\.\d+)?)\s*(%|/\s*10\b|/\s*100\b)?",
    re.IGNORECASE,
)


class ProjectJudgeError(Exception):
    """A request the rules refuse; the message is shown."""


def judging_benchmarks() -> list:
    """The benchmarks whose judge prompt can judge a project's items."""
    return [b for b in registry.offering("judge_project_records") if hasattr(b, "judge_vote")]


def _benchmark(scoring: str | None):
    offered = judging_benchmarks()
    if not offered:
        raise ProjectJudgeError("No benchmark offers a judge prompt for a project's items.")
    if scoring is None:
        return offered[0]
    for benchmark in offered:
        if benchmark.key == scoring:
            return benchmark
    raise ProjectJudgeError(
        f"{scoring!r} cannot judge a project's items: use one of {[b.key for b in offered]}."
    )


def project_items(project: Project):
    """The items a project run judges: benchmark items (never qualification
    or check items), in id order, with their image."""
    return Item.objects.benchmark().filter(project=project).select_related("image").order_by("id")


def start_project_judge_run(
    *,
    project: Project,
    endpoint: JudgeEndpoint,
    name: str,
    concurrency: int,
    user,
    scoring: str | None = None,
    enqueue: bool = True,
) -> JudgeRun:
    """Record a run of `endpoint` over the project's benchmark items, both
    orders, and queue it once the transaction commits."""
    from config.celery import enqueue_on_commit
    from curation.evaluation.judge_runs import max_concurrency
    from curation.evaluation.tasks import judge_release_task

    name = name.strip()
    if not name:
        raise ProjectJudgeError("Name the run: the calibration report shows it by this name.")
    if endpoint.project_id != project.pk:
        raise ProjectJudgeError("That endpoint belongs to another project.")
    if project.task != Task.PAIRWISE:
        raise ProjectJudgeError("Only a pairwise project's items can be judged.")
    limit = max_concurrency()
    if not 1 <= concurrency <= limit:
        raise ProjectJudgeError(f"Concurrency must be between 1 and {limit}.")
    if JudgeRun.objects.filter(project=project, name=name).exists():
        raise ProjectJudgeError(f"A judge run named {name!r} already exists for this project.")
    benchmark = _benchmark(scoring)
    n_records = len(benchmark.judge_project_records(project_items(project)))
    if not n_records:
        raise ProjectJudgeError(
            f"No benchmark item of this project has the {benchmark.title} shape."
        )
    with transaction.atomic():
        try:
            run = JudgeRun.objects.create(
                project=project,
                endpoint=endpoint,
                name=name,
                base_url=endpoint.base_url,
                model=endpoint.model,
                temperature=endpoint.temperature,
                max_tokens=endpoint.max_tokens,
                timeout_seconds=endpoint.timeout_seconds,
                swapped=True,  # position consistency needs both orders
                seed=new_judge_seed(),
                scoring=benchmark.key,
                concurrency=concurrency,
                progress_total=n_records * len(ORDERS),
                created_by=user,
            )
        except IntegrityError:  # the same name submitted twice at once
            raise ProjectJudgeError(f"A judge run named {name!r} already exists.") from None
        if enqueue:
            enqueue_on_commit(judge_release_task, run.pk)
    return run


def project_inputs(run: JudgeRun) -> tuple[list[dict], Callable[[str], bytes]]:
    """The run's records (item id order) and a reader of the images they
    name, which reads those images and nothing else."""
    benchmark: Any = registry.get(run.scoring)  # offers judge_project_records (started so)
    assert run.project is not None
    records = benchmark.judge_project_records(project_items(run.project))
    allowed = {r["Image"] for r in records if r.get("Image")}

    def read_image(name: str) -> bytes:
        if name not in allowed:
            raise OSError(f"{name} is not an image of this project's items")
        return read_stored(default_storage, name)

    return records, read_image


def confidence_of(output: str) -> float | None:
    """The confidence an answer states, as a probability (0..1), else None."""
    found = CONFIDENCE.findall(output)
    if not found:
        return None
    number, unit = found[-1]
    value = float(number)
    unit = unit.replace(" ", "")
    if unit == "%" or unit == "/100":
        value /= 100
    elif unit == "/10":
        value /= 10
    elif value > 1:
        value /= 100  # "confidence: 85" reads as a percentage
    return value if 0 <= value <= 1 else None


def finish_project_run(run: JudgeRun, records: list[dict]) -> None:
    """The answers as JudgeVote rows (replacing any of an earlier finish),
    and the run complete; a run cancelled meanwhile stays cancelled."""
    benchmark: Any = registry.get(run.scoring)  # offers judge_vote (started so)
    item_ids = dict(Item.objects.filter(project=run.project).values_list("external_id", "pk"))
    outputs = JudgeOutput.objects.filter(run=run).values_list(
        "external_id", "order", "output", "error"
    )

    def votes():
        for external_id, order, output, error in outputs.iterator(chunk_size=WRITE_BATCH):
            if order not in ORDERS or external_id not in item_ids:
                continue
            choice = None if error else benchmark.judge_vote(output, call=order)
            yield JudgeVote(
                run=run,
                item_id=item_ids[external_id],
                order=order,
                choice=choice or "",
                confidence=confidence_of(output) if choice else None,
            )

    with transaction.atomic():
        done = JudgeRun.objects.filter(pk=run.pk, status=JudgeRunStatus.RUNNING).update(
            status=JudgeRunStatus.COMPLETE,
            finished_at=timezone.now(),
            progress_done=F("progress_total"),
        )
        if done:
            JudgeVote.objects.filter(run=run).delete()
            # In batches: 200,000 unsaved rows never sit in memory at once.
            pending = votes()
            while batch := list(islice(pending, WRITE_BATCH)):
                JudgeVote.objects.bulk_create(batch)
