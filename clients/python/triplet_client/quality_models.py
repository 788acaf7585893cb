"""What the client returns about the people and judges behind the labels:
judges and their calibration, the annotator gates (qualification, checks),
agreement and label quality. Built as models.py's dataclasses are."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from triplet_client.models import Progress, Votes, from_json

# --- Judges, calibration ------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeEndpoint:
    """An OpenAI-compatible judge (its API key is never returned)."""

    id: int
    name: str
    base_url: str
    model: str
    temperature: float | None = None
    max_tokens: int = 0
    timeout_seconds: float = 0.0
    has_api_key: bool = False
    updated_at: datetime | None = None


@dataclass(frozen=True)
class JudgeRun:
    """A judge run over a ready release (`release`) or over the project's
    benchmark items (`project_items`, for the calibration report)."""

    id: int
    name: str
    status: str  # pending, running, complete, failed, cancelled
    release: int | None = None
    project_items: bool = False
    endpoint: int | None = None
    base_url: str = ""
    model: str = ""
    temperature: float | None = None
    max_tokens: int = 0
    timeout_seconds: float = 0.0
    swapped: bool = False
    seed: int = 0
    scoring: str = ""
    concurrency: int = 0
    video_as: str = "frames"
    video_frames: int = 8
    progress: Progress = field(default_factory=Progress)
    n_errors: int = 0
    error: str = ""
    stale: bool = False  # running, but its worker stopped: resume it
    evaluation: int | None = None  # the leaderboard entry, once complete
    created_by: str | None = None
    created_at: datetime | None = None
    started_at: datetime | None = None
    heartbeat_at: datetime | None = None
    finished_at: datetime | None = None

    @property
    def finished(self) -> bool:
        return self.status in ("complete", "failed", "cancelled")

    @classmethod
    def from_api(cls, data: Mapping[str, Any]) -> JudgeRun:
        return from_json(cls, data, progress=from_json(Progress, data.get("progress") or {}))


@dataclass(frozen=True)
class CalibrationRow:
    """A judge against the human majority in one domain (`domain` None: all)."""

    domain: str | None
    n_items: int = 0
    n_majority: int = 0
    n_tie_or_split: int = 0
    n_too_few_votes: int = 0
    n_judged: int = 0
    n_votes: int = 0
    n_unparsed: int = 0
    accuracy: float | None = None
    kappa: float | None = None
    n_both_orders: int = 0
    position_consistency: float | None = None
    n_with_confidence: int = 0
    ece: float | None = None
    n_cases: int = 0
    judge_standin_agreement: float | None = None
    human_loo_median: float | None = None
    n_humans_measured: int = 0
    can_stand_in: bool | None = None
    verdict: str = ""


@dataclass(frozen=True)
class Calibration:
    """One project judge run's calibration report."""

    run: JudgeRun
    rows: list[CalibrationRow]

    @classmethod
    def from_api(cls, data: Mapping[str, Any]) -> Calibration:
        rows = [from_json(CalibrationRow, r) for r in data.get("rows") or []]
        return cls(JudgeRun.from_api(data["run"]), rows)


# --- Annotator gates: qualification and checks ----------------------------------------------


@dataclass(frozen=True)
class QualificationAttempt:
    id: int
    started_at: datetime | None
    right: int
    total: int
    pass_mark: float
    passed: bool
    finished_at: datetime | None = None  # None: still open


@dataclass(frozen=True)
class QualificationStatus:
    """Your qualification in a project (answers are given on the pages)."""

    required: bool
    admitted: bool
    can_start: bool
    pass_mark: float = 0.0
    retry_hours: int = 0
    items: int = 0
    admitted_at: datetime | None = None
    admitted_by_curator: bool = False
    retry_at: datetime | None = None
    attempts: list[QualificationAttempt] = field(default_factory=list)

    @classmethod
    def from_api(cls, data: Mapping[str, Any]) -> QualificationStatus:
        attempts = [from_json(QualificationAttempt, a) for a in data.get("attempts") or []]
        return from_json(cls, data, attempts=attempts)


@dataclass(frozen=True)
class QualifiedAnnotator:
    """An annotator's admission and attempts (curators)."""

    user_id: int
    username: str
    pseudonym: str = ""
    admitted_at: datetime | None = None
    admitted_by: str | None = None  # the curator who admitted them by hand
    attempts: list[QualificationAttempt] = field(default_factory=list)

    @classmethod
    def from_api(cls, data: Mapping[str, Any]) -> QualifiedAnnotator:
        attempts = [from_json(QualificationAttempt, a) for a in data.get("attempts") or []]
        return from_json(cls, data, attempts=attempts)


@dataclass(frozen=True)
class AnnotatorChecks:
    """A row of the annotator table: accuracy on check items, its 95 %
    Wilson interval, and the pause the check rule put on them (if any)."""

    user_id: int
    pseudonym: str
    role: str
    is_active: bool
    judged: int = 0
    checks_right: int = 0
    checks_total: int = 0
    check_accuracy: float | None = None
    check_ci_low: float = 0.0
    check_ci_high: float = 1.0
    paused: bool = False
    pause: dict[str, Any] | None = None  # paused_at, reason, right, total, low, high, threshold


@dataclass(frozen=True)
class GoldItem:
    """A check or qualification item (made from a settled item, or
    imported): its gold side, explanation and, for a copy, the item it was
    made from; `drifted` when that item's verdict no longer gives this gold."""

    item_id: int
    external_id: str
    purpose: str  # "check" | "qualification"
    gold_choice: str  # "1" | "2"
    is_attention: bool = False
    explanation: str = ""
    copied_from: int | None = None
    retired_at: datetime | None = None
    drifted: bool = False


# --- Agreement and label quality ------------------------------------------------------------


@dataclass(frozen=True)
class Agreement:
    """Agreement per domain (`domains`: the API's rows, `all` first) with
    the cached bootstrap intervals' state."""

    project: str
    intervals_stale: bool
    domains: list[dict[str, Any]]
    intervals_computed_at: datetime | None = None
    refresh_requested_at: datetime | None = None


@dataclass(frozen=True)
class AnnotatorStats:
    """The agreement page's annotator table (`annotators`: the API's rows)."""

    project: str
    annotators: list[dict[str, Any]]
    alpha_delta_stale: bool = False
    min_side_votes: int = 0
    side_bias_fdr: float = 0.0
    alpha_delta_computed_at: datetime | None = None
    crowdlab_computed_at: datetime | None = None


@dataclass(frozen=True)
class LabelQuality:
    """The project's label-quality analysis (CROWDLAB, Dawid-Skene)."""

    available: bool
    status: str  # never, pending, running, ready, failed
    install_hint: str | None = None
    evaluations: list[int] = field(default_factory=list)
    judge_runs: list[int] = field(default_factory=list)
    requested_at: datetime | None = None
    computed_at: datetime | None = None
    seconds: float | None = None
    error: str = ""
    summary: dict[str, Any] = field(default_factory=dict)
    annotators: dict[str, Any] = field(default_factory=dict)  # by user id


@dataclass(frozen=True)
class Suspect:
    """A suspected label error, least trusted label first."""

    item_id: int
    external_id: str
    domain: str
    status: str
    version: int
    label: str  # canonical: 1 or 2
    label_quality: float
    provenance: str = ""
    votes: Votes = field(default_factory=Votes)
    model_p1: float | None = None
    ds_p1: float = 0.0
    models_against: float | None = None
    unanimous: bool = False
    mean_strength: float | None = None
    consensus: str = ""
    consensus_quality: float = 0.0
    annotator_agreement: float = 0.0

    @classmethod
    def from_api(cls, data: Mapping[str, Any]) -> Suspect:
        return from_json(cls, data, votes=from_json(Votes, data.get("votes") or {}))
