import json
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from curation.benchmarks import registry
from curation.benchmarks.base import HEAD_BYTES, EvaluationError, FileOptions, read_head


def detect(path: str):
    """The benchmark whose predictions this file's start looks like."""
    try:
        with Path(path).open("rb") as fh:
            head = fh.read(HEAD_BYTES)
    except OSError as exc:
        raise CommandError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return registry.detect(read_head(head, HEAD_BYTES))


class Command(BaseCommand):
    help = (
        "Score a judge's or reward model's predictions against a release by the rules of "
        "the benchmark whose predictions they are, as its official scorer does (overall, per "
        "category or task and sub-group), plus the extras it offers (e.g. macro average, 95% "
        "CIs, coverage, position consistency)."
    )

    def add_arguments(self, parser):
        benchmarks = registry.offering("score_files")
        parser.add_argument("release", help="; ".join(b.files_release_help for b in benchmarks))
        parser.add_argument(
            "predictions",
            nargs="+",
            help=". ".join(b.files_predictions_help for b in benchmarks),
        )
        parser.add_argument(
            "--format",
            choices=["auto", *(b.key for b in benchmarks)],
            default="auto",
            help="the predictions' benchmark; auto: from the first file's shape",
        )
        parser.add_argument(
            "--swapped",
            metavar="FILE",
            help="predictions made with Output1 and Output2 swapped (for position "
            'consistency); lines may also carry "order": "swapped" in the main file',
        )
        parser.add_argument(
            "--official-compat",
            action="store_true",
            help="score lines whose ID is not in the release as the official script does: "
            "their verdict against the Label the line carries, in its Meta.Category (by "
            "default such lines are listed as unknown IDs and not scored)",
        )
        parser.add_argument("--json", action="store_true", help="print the report as JSON")
        parser.add_argument(
            "--show-ids", type=int, default=10, help="IDs listed per coverage line (text output)"
        )

    def handle(self, *args, **opts):
        started = time.perf_counter()
        if opts["format"] == "auto":
            benchmark = detect(opts["predictions"][0])
        else:
            benchmark = registry.get(opts["format"])
        if not hasattr(benchmark, "score_files"):
            raise CommandError(f"{benchmark.title} predictions are scored by uploading them.")
        options = FileOptions(
            swapped=opts["swapped"],
            official_compat=opts["official_compat"],
            show_ids=opts["show_ids"],
            warn=self.stderr.write,
        )
        try:
            scored = benchmark.score_files(opts["release"], opts["predictions"], options)
        except EvaluationError as exc:
            raise CommandError(str(exc)) from None
        elapsed = time.perf_counter() - started
        if opts["json"]:
            self.stdout.write(json.dumps(scored.report, indent=2))
            return
        self.stdout.write(scored.text(), ending="")
        if opts["verbosity"] > 1 and scored.lines_scored is not None:
            self.stdout.write(f"({scored.lines_scored} lines scored in {elapsed:.2f} s)")
