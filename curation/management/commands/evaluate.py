import json
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from curation.evaluation import scoring, scoring_input, scoring_output


def read_predictions(path: str, order: str | None = None) -> list[scoring_input.Prediction]:
    try:
        with Path(path).open(encoding="utf-8-sig") as fh:
            return scoring_input.parse_predictions(fh, filename=path, order=order)
    except OSError as exc:
        raise CommandError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise CommandError(f"{path}: not UTF-8 text ({exc.reason})") from None


class Command(BaseCommand):
    help = (
        "Score a judge's or reward model's predictions against a release, as the official "
        "Multimodal RewardBench scorer does (overall, per category and sub-bucket), plus "
        "extras (macro average, 95% CIs, coverage, position consistency)."
    )

    def add_arguments(self, parser):
        parser.add_argument("release", help="a release folder or its all_data.json")
        parser.add_argument(
            "predictions",
            help="JSONL, one line per prediction: ID and output (judge text) or Label "
            '("A"/"B"), or score_1 and score_2, or chosen_score and rejected_score',
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
        try:
            records = scoring_input.load_release_records(opts["release"])
            predictions = read_predictions(opts["predictions"])
            if opts["swapped"]:
                predictions += read_predictions(opts["swapped"], order="swapped")
        except scoring_input.ScoringInputError as exc:
            raise CommandError(str(exc)) from None
        report = scoring.score(records, predictions, official_compat=opts["official_compat"])
        elapsed = time.perf_counter() - started
        if opts["json"]:
            self.stdout.write(json.dumps(scoring_output.report_as_dict(report), indent=2))
            return
        self.stdout.write(
            scoring_output.format_report(report, id_limit=opts["show_ids"]), ending=""
        )
        if opts["verbosity"] > 1:
            self.stdout.write(f"({len(predictions)} lines scored in {elapsed:.2f} s)")
