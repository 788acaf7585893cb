"""What a published benchmark is to the studio: one object per benchmark
(a subpackage of curation.benchmarks, its `benchmark.BENCHMARK`) behind the
small interface below, found through one dispatch table
(curation.benchmarks.registry).

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

and, optionally (OptionalMembers below: the registry asks who offers them,
so a benchmark without them still releases and scores uploads):

- scoring predictions files against a release folder on disk (`score_files`,
  the evaluate command), and writing a project's items in its published
  layout outside a release (`export_project`, the export_benchmark command);
- the prefix its files give a re-keyed ID of a category's items
  (`id_prefix`), so an item in two benchmarks' files has one new ID;
- its report section in the API (`api_report`) or fields of its report
  shown beside the evaluation's own (`api_fields`), and the filters of the
  per-item results page (`item_filters`);
- the judge-call seam: several calls per record under call keys of its own
  (`judge_calls`, `judge_call_request`, positions drawn from the run's seed)
  and asking again while an answer is unparsed (`judge_unparsed`,
  `judge_retries`). Without them a record is one call ("original"), or two
  ("original", "swapped") when both orders run.
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
# Enough of a file's start to see its shape (a JSONL line is at most 1 MiB).
HEAD_BYTES = 1024 * 1024 + 1


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
    IDs per domain, released (re-keyed or not) and external, in file order,
    and the shape of its records (curation.releases.exporter.RecordShape)."""

    verdicts: Any  # QuerySet of Verdict
    ids_by_domain: dict[str, list[str]]
    old_by_domain: dict[str, list[str]]
    shape: Any

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


@dataclass(frozen=True)
class FileOptions:
    """The evaluate command's options, as `score_files` takes them (one a
    benchmark does not offer is refused with EvaluationError, saying why)."""

    swapped: str | None = None  # a predictions file of the swapped order
    official_compat: bool = False
    show_ids: int = 10  # IDs listed per line of the text report
    warn: Callable[[str], None] = print  # a notice (stderr), written at once


@dataclass
class FileScore:
    """Predictions files scored against a release on disk: the report that
    --json prints, the text report printed as is otherwise (made when asked),
    and the prediction lines scored (the verbose timing line; None: no such
    line)."""

    report: dict
    text: Callable[[], str]
    lines_scored: int | None = None


@dataclass(frozen=True)
class ApiField:
    """A value of an evaluation's report as a field of its own in the API's
    evaluations (list and detail; `detail`: the detail only): `read(report)`,
    described by `schema` (a serializer field or Serializer instance, or an
    OpenApiTypes) and `help_text`; null where `read` finds nothing."""

    read: Callable[[dict], Any]
    schema: Any
    help_text: str
    detail: bool = False


@dataclass(frozen=True)
class ApiReport:
    """A benchmark's own section of an evaluation's report (report[key]) in
    the API's evaluation detail: a field named after the key, described by
    `serializer` (a Serializer class) and `help_text`; null for the others."""

    serializer: Any
    help_text: str


class Benchmark(Protocol):
    """The interface every benchmark module offers (see module)."""

    key: str  # stored in Evaluation.scoring and JudgeRun.scoring; the upload's format
    title: str
    # Where a discovered benchmark stands (lower first): the order a release
    # holds the benchmarks' files and a page shows their tables.
    position: int
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


class OptionalMembers(Protocol):
    """What a benchmark may also offer (see module); the registry's
    `offering(name)` lists those that do."""

    # --- the evaluate command (a release folder on disk)
    files_release_help: str  # what the release argument may be, for this benchmark
    files_predictions_help: str  # what its predictions files are

    def score_files(self, release: str, predictions: list[str], options: FileOptions) -> FileScore:
        """Raises EvaluationError with the message the command stops with."""
        ...

    # --- the export_benchmark command
    export_help: str

    def export_project(self, project: Any, folder: Any, *, rekey: bool, salt: str) -> dict:
        """Writes the project's items in the published layout into `folder`;
        returns {"ids": {old: new}, "message": the line printed}."""
        ...

    # --- release IDs, API, pages
    def id_prefix(self, category: str) -> str | None: ...  # None: not a category of its own

    api_report: ApiReport
    api_fields: Callable[[], dict[str, ApiField]]  # fields named as the API shows them

    def item_filters(self, report: dict) -> tuple[list[str], list[str]]:
        """The per-item results page's two filters (categories, sub-buckets)
        from an evaluation's stored report."""
        ...

    # --- the judge-call seam (curation.evaluation.judge_runs)
    def judge_calls(self, record: dict, seed: int, *, both_orders: bool) -> list[str]:
        """The call keys of one judge record (each 1..16 characters, unique
        per record, e.g. "run1".."run5", "perm0"): one request each, its
        answer stored and handed to `judge_predictions` under
        (record ID, call key)."""
        ...

    def judge_call_request(
        self,
        record: dict,
        read_image: Callable[[str], bytes],
        endpoint: Any,
        *,
        call: str,
        seed: int,
    ) -> dict:
        """The request body of one call (instead of `judge_request`). Its
        randomness (a swap, a permutation) comes from
        ``random.Random(f"{seed}:{record ID}:{call}")`` or the like, so the
        run's seed gives the same requests again and scoring re-derives it."""
        ...

    # What `judge_calls` sends per item, in a few words ("10 calls per pair,
    # each in an order drawn from the run's seed"): shown on the judge run
    # form and a run's page instead of "both orders", which means nothing here.
    judge_calls_help: str

    judge_retries: int  # how many more times an unparsed answer is asked again

    def judge_unparsed(self, output: str) -> bool:
        """Whether an answer holds no verdict (asked again, up to judge_retries)."""
        ...

    # --- judging a project's items (curation.evaluation.project_judging)
    def judge_project_records(self, items: Any) -> list[dict]:
        """Judge records (as `judge_records` gives) of those of a project's
        items the benchmark's prompt can judge, each with the item's
        external ID as "ID"; the image names are the items' stored files."""
        ...

    def judge_vote(self, output: str, *, call: str) -> str | None:
        """The item's response ("1"/"2") an answer to a pass picks; None
        when it holds no verdict."""
        ...

    def judge_project_request(
        self, record: dict, read_image: Any, endpoint: Any, *, swapped: bool
    ) -> dict:
        """A project record's request in one order (else `judge_request`),
        for a benchmark whose release request does not swap the responses."""
        ...


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
