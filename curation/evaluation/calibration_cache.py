"""The calibration report, stored (issue 36 follow-up): computed in a
background task (curation.tasks.refresh_calibration, in an isolated child)
and served as stored by the page and the API, as the agreement page's
intervals are. At 100,000 items x 3 votes the computation takes seconds
(bench/calibration_db_bench.py); a page view reads a fixed handful of rows.

A computation is queued when a project judge run completes, when a curator
asks (Recompute), and when a view finds the human votes changed enough since
the stored report (CHANGED_SHARE of them, at least CHANGED_MIN). Staleness is
the agreement page's idea (the votes the stored figures were computed from
against now) read cheaply: the votes newer than the stored report's newest
(votes_since), so that a revised vote counts too and a page view does not
count the project's 300,000 votes."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from django.db.models import Count, Exists, Max, OuterRef, Q
from django.utils import timezone

from annotate.models import Item, Project
from curation.evaluation import calibration
from curation.evaluation.calibration_report import (
    human_vote_rows,
    human_votes,
    judge_votes,
    project_runs,
)
from curation.models import CalibrationCache, JudgeRun, JudgeVote

# A request older than this is taken as lost (its worker died): asked again,
# it is queued again. As the agreement page's (curation.agreement.reports).
STALE_REQUEST = timedelta(minutes=10)
# Votes given, revised or withdrawn since the stored report that queue a new
# one when the page or the API is read: this share of the votes it counted,
# and never fewer than CHANGED_MIN.
CHANGED_SHARE = 0.05
CHANGED_MIN = 20


@dataclass
class VoteMark:
    n_votes: int  # the current human votes the report reads
    last_vote_id: int


def vote_mark(project: Project) -> VoteMark:
    """One statement over the project's votes (the task's): how many human
    votes the report reads, and the newest one's id."""
    row = human_vote_rows(project).aggregate(n=Count("pk"), last=Max("pk"))
    return VoteMark(row["n"], row["last"] or 0)


def votes_since(project: Project, cache: CalibrationCache) -> int:
    """The project's human votes given or revised since the stored report
    (a revision is a new vote row): those with a larger id than its newest.
    One statement that walks the primary key from there, so it costs what
    was voted since, not the project's size. Votes withdrawn without a new
    one (an item deleted) are not counted: Recompute takes them in."""
    return human_vote_rows(project).filter(pk__gt=cache.last_vote_id).count()


def request_refresh(*, project: Project) -> bool:
    """Queue a computation of the project's report unless one is queued (a
    conditional update: two clicks queue one task). Asked while one runs,
    the running one queues one more when it ends (its data may predate the
    request). Returns True if queued now."""
    from config.celery import enqueue_on_commit
    from curation.evaluation.tasks import refresh_calibration

    now = timezone.now()
    CalibrationCache.objects.get_or_create(project=project)
    rows = CalibrationCache.objects.filter(project=project)
    queued = rows.filter(
        Q(requested_at__isnull=True) | Q(requested_at__lt=now - STALE_REQUEST)
    ).update(requested_at=now, again=False, progress_done=0, progress_total=0, error="")
    if queued:
        enqueue_on_commit(refresh_calibration, project.pk)
    else:
        rows.update(again=True)
    return bool(queued)


def refresh(*, project: Project) -> CalibrationCache:
    """Compute and store the project's report (the task's body; idempotent).
    Its progress, in steps (the votes read, then one per judge run), is
    written to the row as it goes, for the page."""
    from config.celery import enqueue_on_commit
    from curation.evaluation.tasks import refresh_calibration

    cache, _ = CalibrationCache.objects.get_or_create(project=project)
    rows = CalibrationCache.objects.filter(pk=cache.pk)
    if cache.requested_at is None:  # run by hand, or a message sent twice
        rows.update(requested_at=timezone.now())
    rows.update(again=False)
    # The mark first: votes given while it computes are newer than the report.
    mark = vote_mark(project)
    voted = JudgeVote.objects.filter(run=OuterRef("pk"))
    runs = list(
        JudgeRun.objects.filter(project=project).filter(Exists(voted)).order_by("name", "pk")
    )
    rows.update(progress_done=0, progress_total=len(runs) + 1)
    try:
        humans = human_votes(project) if runs else {}
        domain_of = domains_of(project) if runs else {}
        rows.update(progress_done=1)
        out = []
        for done, run in enumerate(runs, start=2):
            figures = calibration.report(humans, judge_votes(run), domain_of)
            out.append(
                {
                    "run": run.pk,
                    "rows": [{"domain": domain, **f.summary()} for domain, f in figures],
                }
            )
            rows.update(progress_done=done)
    except Exception as exc:
        rows.update(requested_at=None, error=f"{type(exc).__name__}: {exc}"[:2000])
        raise
    rows.update(
        payload={"runs": out},
        computed_at=timezone.now(),
        n_votes=mark.n_votes,
        last_vote_id=mark.last_vote_id,
        requested_at=None,
        error="",
    )
    # Asked again while this ran: once more, with what changed meanwhile.
    if rows.filter(again=True).update(again=False, requested_at=timezone.now()):
        enqueue_on_commit(refresh_calibration, project.pk)
    cache.refresh_from_db()
    return cache


def domains_of(project: Project) -> dict[int, str]:
    return dict(
        Item.objects.benchmark()
        .filter(project=project)
        .values_list("pk", "domain__slug")
        .iterator(chunk_size=20_000)
    )


@dataclass
class Stored:
    """What the page and the API show: the stored report with its runs, and
    its state."""

    cache: CalibrationCache
    reports: list[dict] = field(default_factory=list)  # [{"run": JudgeRun, "rows": [...]}]
    votes_since: int = 0
    stale: bool = False
    queued_now: bool = False

    @property
    def computed(self) -> bool:
        return self.cache.computed_at is not None

    @property
    def computing(self) -> bool:
        return self.cache.requested_at is not None


def stored_report(project: Project, runs: list[JudgeRun] | None = None) -> Stored:
    """The stored report, its runs from `runs` (the project's, read once by
    the caller, or here), and whether the votes changed since; queues a
    computation when they changed enough, or when none was ever made and a
    run has votes. A fixed number of statements whatever the project's size."""
    cache, _ = CalibrationCache.objects.get_or_create(project=project)
    if runs is None:
        runs = list(project_runs(project))
    by_pk = {run.pk: run for run in runs}
    stored = Stored(cache=cache)
    if stored.computed:
        stored.votes_since = votes_since(project, cache)
        stored.stale = stored.votes_since > 0
        enough = max(CHANGED_MIN, CHANGED_SHARE * cache.n_votes)
        due = stored.votes_since >= enough
    else:  # never computed: at once if a run may have votes to report
        due = any(run.status == "complete" for run in runs)
    if due and not stored.computing:
        stored.queued_now = request_refresh(project=project)
        cache.refresh_from_db()  # eager (tests, CELERY_TASK_ALWAYS_EAGER): computed now
    stored.reports = [
        {"run": by_pk[entry["run"]], "rows": entry["rows"]}
        for entry in cache.payload.get("runs", [])
        if entry["run"] in by_pk
    ]
    return stored
