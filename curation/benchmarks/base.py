"""What a published benchmark is to the studio: one object per benchmark
(curation.benchmarks.mrb, curation.benchmarks.mmrb2, …) behind the small
interface below, found through one dispatch table (curation.benchmarks).

The release build, the evaluation service, the judge runner and the
leaderboard ask the release's benchmarks and never name one. A benchmark
owns, in its own terms:

- its release files, card section and manifest section (`prepare`, during
  the build; card text from the manifest it wrote, `card`);
- reading and scoring a predictions file against a ready release
  (`detects`, `score`), with its scorer pure and its official lines quoted;
- its leaderboard table (`leaderboard`, a template of its own);
- its judge prompt and the predictions a judge run's answers become
  (`judge_records`, `judge_request`, `judge_predictions`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from django.core.files.base import File


class EvaluationError(Exception):
    """A predictions file or request the rules refuse; the message is shown."""


Predictions = bytes | File
# The largest predictions file scored (checked before a byte of it is read).
MAX_PREDICTIONS_BYTES = 200 * 1024 * 1024


def size_of(predictions: Predictions) -> int:
    return len(predictions) if isinstance(predictions, bytes) else predictions.size


@dataclass(frozen=True)
class Upload:
    """A predictions file to score, as the page, the API or a judge run hands
    it over. `swapped` and `official_compat` are options a benchmark may
    refuse (Benchmark.score says why)."""

    predictions: Predictions
    filename: str
    swapped: Predictions | None = None
    swapped_filename: str = ""
    official_compat: bool = False


@dataclass
class Scored:
    """What a benchmark made of an upload: the report stored on the
    Evaluation, its overall accuracy, the files to keep (suffix -> content,
    e.g. {".jsonl": ..., "-swapped.jsonl": ...}) and a writer of the per-item
    results, called with the new Evaluation inside its transaction."""

    report: dict
    accuracy: float | None
    files: dict[str, Predictions]
    store_items: Callable[[Any], Any]


@dataclass
class Board:
    """One benchmark's leaderboard table on a release's leaderboard page:
    rendered by `template` with `board` in its context."""

    key: str
    title: str
    template: str
    columns: list[str]
    rows: list[dict]
    context: dict = field(default_factory=dict)
    # Rows for the CSV download (header first), if the table offers one.
    csv: Callable[[], list[list[Any]]] | None = None


@dataclass
class BuildContext:
    """What a release build gives each benchmark of the release."""

    release: Any
    project: Any
    domains: Sequence[Any]  # the release's Domain rows, in order
    included: Any  # the included verdicts (QuerySet)
    folder: Any  # Path of the release folder being written
    salt: str  # Release.rekey_salt ("" unless IDs are re-keyed)
    pseudonyms: dict[int, str]
    vote_extras: Any  # curation.releases.members.VoteExtras


@dataclass
class Records:
    """The release's pair layout, written by the shared writer
    (curation.releases.exporter: the records files, images/, dpo/, the
    parquet and TRL copies, provenance.jsonl): the included verdicts whose
    items have its shape (one prompt image, two text responses) and their
    IDs per domain, released (re-keyed or not) and external, in file order."""

    verdicts: Any  # QuerySet of Verdict
    ids_by_domain: dict[str, list[str]]
    old_by_domain: dict[str, list[str]]

    @property
    def total(self) -> int:
        return sum(len(ids) for ids in self.ids_by_domain.values())


@dataclass
class Part:
    """What one benchmark wrote (or has the build write) into a release.

    The benchmark whose records are the release's pair layout sets `records`;
    the others write their own files in `prepare` and say what they hold:
    `members_by_domain` counts members only in their files, and
    `extra_provenance(members)` yields those members' provenance.jsonl lines
    (appending their membership tuples to `members`). `manifest` is the
    benchmark's manifest section, under its key; `format_name` names its
    files in the manifest's `formats`."""

    key: str
    format_name: str
    released: dict[str, str] = field(default_factory=dict)  # external ID -> released ID
    members_by_domain: dict[str, int] = field(default_factory=dict)
    written: Any = None  # the verdicts of its members (QuerySet), for the decision rules
    records: Records | None = None
    extra_provenance: Callable[[list], Iterable[dict]] | None = None
    manifest: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def holds(self) -> bool:
        """Whether its files hold any member."""
        if self.records is not None:
            return bool(self.records.total)
        return bool(self.manifest)


class Benchmark(Protocol):
    """The interface every benchmark module offers (see module)."""

    key: str  # stored in Evaluation.scoring and JudgeRun.scoring; the upload's format
    title: str
    # Predictions in this benchmark's shape are recognised by `detects`; the
    # one benchmark with `detect_last` takes any file the others did not.
    detect_last: bool
    # A judge run of this benchmark always sends both orders.
    judge_both_orders: bool

    # --- release
    rekey_prefix: str  # how its re-keyed IDs are prefixed (the manifest's id_rekey)

    def serves(self, domains: Sequence[Any]) -> bool: ...
    def prepare(self, ctx: BuildContext) -> Part: ...
    def card(self, meta: Any, summary: dict) -> Any: ...  # a CardSection (curation.releases.card)

    # --- evaluation
    def in_release(self, release: Any) -> bool: ...
    def missing_message(self, release: Any) -> str: ...
    def detects(self, head: str) -> bool: ...
    def score(self, release: Any, upload: Upload) -> Scored: ...
    def leaderboard(self, release: Any, evaluations: Any, *, sort: str = "") -> Board: ...
    def ensure_item_predictions(self, evaluation: Any) -> int: ...

    # --- judge runs
    def judge_item_count(self, release: Any) -> int: ...
    def judge_records(self, release: Any) -> list[dict]: ...
    def judge_request(
        self, record: dict, read_image: Callable[[str], bytes], endpoint: Any, *, swapped: bool
    ) -> dict: ...
    def judge_predictions(
        self, outputs: dict[tuple[str, str], str], records: list[dict], run: Any
    ) -> Upload: ...


def read_head(predictions: Predictions, limit: int) -> str:
    """The start of an uploaded file as text (for `Benchmark.detects`)."""
    import codecs

    if isinstance(predictions, bytes):
        raw = predictions[:limit]
    else:
        predictions.seek(0)
        raw = predictions.read(limit)
        predictions.seek(0)
    return raw.removeprefix(codecs.BOM_UTF8).decode("utf-8", errors="replace")


def first(items: Iterator[Any] | Iterable[Any]) -> Any:
    return next(iter(items), None)
