"""What the client returns: frozen dataclasses built from the API's answers.

Fields are the API's own names (its OpenAPI schema at /api/schema/ documents
each). Keys a newer server adds are ignored; fields an older answer lacks take
their default. Timestamps become timezone-aware datetimes."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    T = TypeVar("T", bound=DataclassInstance)
else:
    T = TypeVar("T")

TIMESTAMPS = {"last_active"}  # besides every *_at field


def parse_time(value: Any) -> datetime | None:
    if not value:
        return None
    text = str(value)
    if text.endswith("Z"):  # (fromisoformat takes "Z" only from Python 3.11)
        text = text[:-1] + "+00:00"
    return datetime.fromisoformat(text)


def from_json(cls: type[T], data: Mapping[str, Any], **given: Any) -> T:
    """An instance of the dataclass `cls` from an API object: its fields by
    name (missing ones take their default), `given` values first."""
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name in given:
            values[f.name] = given[f.name]
        elif f.name in data:
            value = data[f.name]
            is_time = f.name.endswith("_at") or f.name in TIMESTAMPS
            values[f.name] = parse_time(value) if is_time else value
    return cls(**values)


# --- Projects and teams -------------------------------------------------------------------


@dataclass(frozen=True)
class Project:
    slug: str
    name: str
    description: str = ""
    guidelines: str = ""
    role: str | None = None  # your role in it (admin, curator, annotator)
    votes_per_item: int = 3
    allow_tie: bool = True
    preference_scale: str = "ab"
    require_rationale: bool = False
    # In the project's own answer (get_project, create_project), not in lists:
    licence: str | None = None
    escalation_votes: int | None = None
    agree_share: float | None = None
    consensus_strength: float | None = None
    lease_minutes: int | None = None
    seed: int | None = None
    archived: bool | None = None


@dataclass(frozen=True)
class Domain:
    slug: str
    title: str
    export_category: str
    kind: str  # correctness | preference
    guidelines: str = ""
    asks_grade: bool = False
    correctness_question: str | None = None
    yes_label: str | None = None
    no_label: str | None = None
    grade_question: str | None = None


@dataclass(frozen=True)
class Member:
    user_id: int
    username: str
    role: str
    is_active: bool
    email: str = ""
    pseudonym: str = ""
    judged: int = 0
    last_active: datetime | None = None
    agreement_with_majority: float | None = None


@dataclass(frozen=True)
class Invitation:
    id: int
    role: str
    max_uses: int | None
    uses: int
    expires_at: datetime | None
    state: str  # open, expired, used, revoked
    note: str = ""
    url: str | None = None  # only in the answer that created it

    @property
    def token(self) -> str | None:
        """The last part of the link, for accept_invitation."""
        return self.url.rstrip("/").rsplit("/", 1)[-1] if self.url else None


@dataclass(frozen=True)
class Membership:
    """Joining a project with an invitation."""

    project: str
    role: str


@dataclass(frozen=True)
class ImportResult:
    format: str
    created: int
    updated: int
    unchanged: int
    images_stored: int
    duplicates_skipped: int = 0
    duplicates_renamed: int = 0


# --- Annotation ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Assignment:
    """An item as an annotator sees it: responses in displayed order."""

    id: int
    status: str
    project: str
    domain: dict[str, str]  # slug, title, kind
    prompt: str
    left: str
    right: str
    lease_expires_at: datetime | None = None
    image_url: str | None = None
    image_width: int | None = None
    image_height: int | None = None
    content: dict[str, Any] = field(default_factory=dict)
    allow_tie: bool = True
    require_rationale: bool = False
    preference_scale: str = "ab"
    scale: list[dict[str, Any]] = field(default_factory=list)
    asks_grade: bool = False
    task: str = "pairwise"  # pairwise, best_of_n or ranking
    criterion: str = ""  # the item's own question, if any
    group: dict[str, Any] | None = None  # position, size, label among its group's items

    @property
    def asks_correctness(self) -> bool:
        return self.domain.get("kind") == "correctness"

    @property
    def response_names(self) -> list[str]:
        """The responses' displayed names: left, right for a pair; A, B, C, …
        for more (what `judge(ranking=…)` orders and `pick` names)."""
        if "responses" in self.content:
            return [r["name"] for r in self.content["responses"]]
        return ["left", "right"]

    def parts(self, place: str) -> list[Part]:
        """The parts shown at `place`: prompt, left, right, or a response's
        name (A, B, …) beside more than two responses."""
        if place in ("prompt", "left", "right"):
            return [from_json(Part, p) for p in self.content.get(place) or []]
        for response in self.content.get("responses") or []:
            if response["name"] == place:
                return [from_json(Part, p) for p in response["parts"]]
        raise KeyError(f"No place {place!r}: prompt or one of {self.response_names}.")


@dataclass(frozen=True)
class Part:
    """One part of an assignment's content: text, image, video or audio.
    Media URLs (and the poster, strip and waveform images, null until made
    in the background) download with download_media()."""

    kind: str
    text: str = ""
    url: str | None = None
    width: int | None = None
    height: int | None = None
    duration_ms: int | None = None
    fps: float | None = None
    content_type: str | None = None
    loudness_db: float | None = None
    poster_url: str | None = None
    strip_url: str | None = None
    waveform_url: str | None = None


@dataclass(frozen=True)
class Claim:
    """The answer to claiming the next item: an assignment, or none with
    `done` (nothing will ever come) or a `retry_after` in seconds."""

    assignment: Assignment | None
    done: bool = False
    retry_after: float | None = None


@dataclass(frozen=True)
class Judged:
    assignment: int
    status: str
    revision: int
    already_submitted: bool
    choice: str = ""  # pairs, displayed: left, right or tie
    strength: int | None = None
    pick: str | None = None  # best-of-N: the name picked (A, B, …) or none
    ranking: list[int] | None = None  # ranking: ranks in displayed order
    next: Assignment | None = None  # with next=True
    more_may_come: bool | None = None


# --- Curation -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Votes:
    response_1: int = 0
    response_2: int = 0
    tie: int = 0


@dataclass(frozen=True)
class Verdict:
    item_id: int
    external_id: str
    domain: str
    status: str
    version: int
    votes: Votes = field(default_factory=Votes)
    votes_needed: int = 0
    final_choice: str = ""
    provenance: str = ""
    contest_kind: str = ""
    exclusion_category: str = ""
    reason: str = ""
    escalations: int = 0
    escalated_by: int = 0
    decided_by: str | None = None
    updated_at: datetime | None = None
    # One verdict's own answer (verdict(), decide()) only:
    item: dict[str, Any] | None = None
    current_votes: list[dict[str, Any]] | None = None
    you_voted: bool | None = None
    eligible_annotators: int | None = None
    stuck: str | None = None

    @classmethod
    def from_api(cls, data: Mapping[str, Any]) -> Verdict:
        return from_json(cls, data, votes=from_json(Votes, data.get("votes") or {}))


@dataclass(frozen=True)
class ItemRow:
    """One row of the data grid (items())."""

    item_id: int
    external_id: str
    domain: str
    status: str
    version: int
    prompt_snippet: str = ""
    final_choice: str = ""
    contest_kind: str = ""
    exclusion_category: str = ""
    votes: Votes = field(default_factory=Votes)
    votes_needed: int = 0
    winner_share: float = 0.0
    flagged_problem: bool = False
    has_gold: bool = False
    group: str = ""  # the item's group key (a prompt's pairs, a pair's criteria)
    criterion: str = ""  # the question asked of the item
    thumbnail: str | None = None
    updated_at: datetime | None = None

    @classmethod
    def from_api(cls, data: Mapping[str, Any]) -> ItemRow:
        return from_json(cls, data, votes=from_json(Votes, data.get("votes") or {}))


# --- Releases and evaluations -------------------------------------------------------------


@dataclass(frozen=True)
class Progress:
    done: int = 0
    total: int = 0
    percent: int = 0


@dataclass(frozen=True)
class Release:
    id: int
    project: str
    version: str
    status: str  # pending, building, ready, failed
    progress: Progress = field(default_factory=Progress)
    notes: str = ""
    seed: int = 0
    domains: list[str] = field(default_factory=list)
    min_label_quality: float | None = None
    rekeyed: bool = False
    counts: dict[str, Any] = field(default_factory=dict)
    sha256: str = ""
    size_bytes: int = 0
    warnings: list[str] = field(default_factory=list)
    error: str = ""
    created_by: str | None = None
    created_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    download_url: str | None = None
    pairwise: str = ""
    stalled: bool = False
    heartbeat_at: datetime | None = None
    filters: dict[str, Any] = field(default_factory=dict)  # asked for (create_release's)
    filter_report: dict[str, Any] | None = None  # when ready: the manifest's release_filters
    balance_report: dict[str, Any] | None = None  # when ready: side and length balance

    @property
    def finished(self) -> bool:
        return self.status in ("ready", "failed")

    @classmethod
    def from_api(cls, data: Mapping[str, Any], project: str) -> Release:
        progress = from_json(Progress, data.get("progress") or {})
        return from_json(cls, data, project=project, progress=progress)


@dataclass(frozen=True)
class Group:
    """A row of the official scorer's table: overall, a Category or a sub-bucket."""

    name: str
    level: str
    correct: int
    total: int
    accuracy: float | None


@dataclass(frozen=True)
class Evaluation:
    """A leaderboard entry; evaluate() and evaluation() fill the report too."""

    id: int
    name: str
    accuracy: float | None
    scoring: str = "mrb"
    created_by: str | None = None
    created_at: datetime | None = None
    release: int | None = None
    per_category: list[Group] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)
    mmrb2: dict[str, Any] | None = None

    @classmethod
    def from_api(cls, data: Mapping[str, Any]) -> Evaluation:
        groups = [from_json(Group, g) for g in data.get("per_category") or []]
        return from_json(cls, data, per_category=groups)


# --- Mixes --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mix:
    """A training mix of releases and projects, built in the background."""

    id: int
    name: str
    version: str
    status: str  # pending, building, ready, failed
    notes: str = ""
    seed: int = 0
    mode: str = "caps"
    size: int | None = None
    dedup: bool = True
    filters: dict[str, Any] = field(default_factory=dict)
    sources: list[dict[str, Any]] = field(default_factory=list)
    progress: Progress = field(default_factory=Progress)
    counts: dict[str, Any] = field(default_factory=dict)
    report: dict[str, Any] | list[Any] = field(default_factory=dict)
    sha256: str = ""
    size_bytes: int = 0
    error: str = ""
    created_by: str | None = None
    created_at: datetime | None = None
    finished_at: datetime | None = None
    download_url: str | None = None

    @classmethod
    def from_api(cls, data: Mapping[str, Any]) -> Mix:
        return from_json(cls, data, progress=from_json(Progress, data.get("progress") or {}))


# --- Vote modes, bulk actions, per-item predictions ---------------------------------------


@dataclass(frozen=True)
class Adaptive:
    """A project's vote mode and adaptive rule, with the last refit's counts."""

    vote_mode: str  # fixed or adaptive
    base_votes: int
    budget: int
    stop_certainty: float
    rule: str = ""
    posterior: str = ""
    fallback: bool = False
    refitted_at: datetime | None = None
    items: dict[str, int] = field(default_factory=dict)  # base, open, certain, agreement, budget
    judges: int = 0


@dataclass(frozen=True)
class BulkResult:
    done: int
    skipped: dict[str, int] = field(default_factory=dict)  # why -> how many
    message: str = ""


@dataclass(frozen=True)
class ItemPrediction:
    """How one leaderboard entry judged one item (canonical terms)."""

    evaluation: int
    item_id: int
    external_id: str
    correct: bool
    category: str = ""
    sub_bucket: str = ""
    chosen: str = ""  # the label
    choice: str = ""  # the entry's answer, original order
    swapped_choice: str = ""
    has_swapped: bool = False
    random_verdict: bool = False
    p1: float | None = None
    raw: Any = None
