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
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotate.models import Domain, Item, Project, Task
from common.storage import read_stored
from curation.benchmarks import registry
from curation.benchmarks.common.project_items import FILES
from curation.evaluation import media_content as media
from curation.evaluation.run_start import check_run_options, record_judge_run
from curation.models import JudgeEndpoint, JudgeOutput, JudgeRun, JudgeRunStatus, JudgeVote
from curation.models.evaluation import new_judge_seed

ORDERS = ("original", "swapped")
JUDGE = "_judge"  # a project record's benchmark key (the owner of its item's domain)
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
        return None
    for benchmark in offered:
        if benchmark.key == scoring:
            return benchmark
    raise ProjectJudgeError(
        f"{scoring!r} cannot judge a project's items: use one of {[b.key for b in offered]}."
    )


def owners(project: Project) -> dict[int, Any]:
    """The benchmark that judges each domain's items, by domain id: the first
    judging benchmark that serves the domain (as a release maps domains to
    benchmarks: registry.for_domains), the catch-all (`detect_last`) last;
    None when none does."""
    offered = judging_benchmarks()
    ordered = [b for b in offered if not b.detect_last] + [b for b in offered if b.detect_last]
    domains = Domain.objects.filter(project=project)
    return {d.pk: next((b for b in ordered if b.serves([d])), None) for d in domains}


def project_records(project: Project) -> list[dict]:
    """The records a project run judges, in item id order: each item by the
    benchmark owning its domain, in that benchmark's shape (an item it cannot
    shape is left out), tagged with its key under JUDGE."""
    items = list(project_items(project))
    position = {item.external_id: n for n, item in enumerate(items)}
    by_owner: dict[str, tuple[Any, list]] = {}
    for domain_id, benchmark in owners(project).items():
        if benchmark is not None:
            mine = [i for i in items if i.domain_id == domain_id]
            by_owner.setdefault(benchmark.key, (benchmark, []))[1].extend(mine)
    records = []
    for key, (benchmark, owned) in by_owner.items():
        owned.sort(key=lambda item: item.pk)
        records += [{**r, JUDGE: key} for r in benchmark.judge_project_records(owned)]
    return sorted(records, key=lambda r: position[r["ID"]])


def project_items(project: Project):
    """The items a project run judges: benchmark items (never qualification
    or check items), in id order, with their image."""
    return (
        Item.objects.benchmark()
        .filter(project=project)
        .select_related("image", "domain")
        .order_by("id")
    )


def start_project_judge_run(
    *,
    project: Project,
    endpoint: JudgeEndpoint,
    name: str,
    concurrency: int,
    user,
    scoring: str | None = None,
    enqueue: bool = True,
    video_as: str = media.FRAMES,
    video_frames: int = media.DEFAULT_FRAMES,
) -> JudgeRun:
    """Record a run of `endpoint` over the project's benchmark items, both
    orders, and queue it once the transaction commits. Each item is judged
    by the benchmark owning its domain (`owners`); `scoring`, when given,
    must be one of them (it names the run's benchmark; otherwise the first
    item's). `video_as`, `video_frames`: how videos are sent."""
    name = name.strip()
    if not name:
        raise ProjectJudgeError("Name the run: the calibration report shows it by this name.")
    check_run_options(
        endpoint=endpoint,
        project_id=project.pk,
        concurrency=concurrency,
        video_as=video_as,
        video_frames=video_frames,
        error=ProjectJudgeError,
    )
    if project.task != Task.PAIRWISE:
        raise ProjectJudgeError("Only a pairwise project's items can be judged.")
    if JudgeRun.objects.filter(project=project, name=name).exists():
        raise ProjectJudgeError(f"A judge run named {name!r} already exists for this project.")
    benchmark = _benchmark(scoring)
    records = project_records(project)
    if benchmark is not None and not any(r[JUDGE] == benchmark.key for r in records):
        raise ProjectJudgeError(
            f"No benchmark item of this project has the {benchmark.title} shape."
        )
    if not records:
        raise ProjectJudgeError("No benchmark item of this project has a shape a judge can judge.")
    return record_judge_run(
        endpoint=endpoint,
        name=name,
        user=user,
        enqueue=enqueue,
        error=ProjectJudgeError,
        project=project,
        swapped=True,  # position consistency needs both orders
        seed=new_judge_seed(),
        scoring=benchmark.key if benchmark else records[0][JUDGE],
        concurrency=concurrency,
        video_as=video_as,
        video_frames=video_frames,
        progress_total=len(records) * len(ORDERS),
    )


def project_inputs(run: JudgeRun) -> tuple[list[dict], Callable[[str], bytes]]:
    """The run's records (item id order) and a reader of the files they name
    (the run's media options on it), which reads those files and nothing else."""
    assert run.project is not None
    records = project_records(run.project)
    allowed = {r["Image"] for r in records if r.get("Image")}
    allowed.update(name for r in records for name in r.get(FILES, ()))

    def read_image(name: str) -> bytes:
        if name not in allowed:
            raise OSError(f"{name} is not a file of this project's items")
        return read_stored(default_storage, name)

    return records, media.MediaFiles(read_image, media.MediaContent(media.MediaOptions.of_run(run)))


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
    judge_of = {r["ID"]: registry.get(r.get(JUDGE, run.scoring)) for r in records}
    item_ids = dict(Item.objects.filter(project=run.project).values_list("external_id", "pk"))
    outputs = JudgeOutput.objects.filter(run=run).values_list(
        "external_id", "order", "output", "error"
    )

    def votes():
        for external_id, order, output, error in outputs.iterator(chunk_size=WRITE_BATCH):
            if order not in ORDERS or external_id not in item_ids or external_id not in judge_of:
                continue
            choice = None if error else judge_of[external_id].judge_vote(output, call=order)
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
            # The stored calibration report, recomputed with this run once it commits.
            from curation.evaluation.calibration_cache import request_refresh

            request_refresh(project=run.project)
