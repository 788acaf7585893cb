import json
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotate.importing import mmrb2_format
from curation.benchmarks.mmrb2 import scoring as mmrb2_scoring
from curation.benchmarks.mrb import scoring, scoring_input, scoring_output


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
        parser.add_argument(
            "release",
            help="a release folder or its all_data.json; MMRB2: a release folder (its "
            "mmrb2/<task>.json), a folder of task files (only t2i.json, edit.json, "
            "interleaved.json and reasoning.json are read; other .json files there are "
            "skipped and named), or one task file",
        )
        parser.add_argument(
            "predictions",
            nargs="+",
            help="MRB: one JSONL file, one line per prediction: ID and output (judge text) or "
            'Label ("A"/"B"), or score_1 and score_2, or chosen_score and rejected_score. '
            'MMRB2: one or more JSON files {"<pair id>": {"forward": [{"judgement": ...}], '
            '"reverse": [...]}} (e.g. one per task, as compute_accuracy.py takes them)',
        )
        parser.add_argument(
            "--format",
            choices=["auto", "mrb", "mmrb2"],
            default="auto",
            help="the predictions' format; auto: from the first file's shape",
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
        fmt = opts["format"]
        if fmt == "auto":
            fmt = "mmrb2" if _looks_like_mmrb2(opts["predictions"][0]) else "mrb"
        if fmt == "mmrb2":
            return self.handle_mmrb2(opts)
        if len(opts["predictions"]) > 1:
            raise CommandError("MRB predictions are one JSONL file (and --swapped).")
        try:
            records = scoring_input.load_release_records(opts["release"])
            predictions = read_predictions(opts["predictions"][0])
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

    def handle_mmrb2(self, opts) -> None:
        if opts["swapped"] or opts["official_compat"]:
            raise CommandError(
                "--swapped and --official-compat are MRB options: MMRB2 predictions carry "
                "both orders (forward, reverse) in one file."
            )
        tasks, skipped = mmrb2_task_files(Path(opts["release"]))
        if skipped:
            self.stderr.write(
                f"Skipped {len(skipped)} file(s) of {skipped[0].parent} that are not MMRB2 "
                f"task files (only {', '.join(f'{t}.json' for t in mmrb2_format.TASKS)} are "
                f"read): {_names(skipped)}"
            )
        predictions: dict = {}
        origin: dict[str, str] = {}
        repeated = 0
        for name in opts["predictions"]:
            try:
                text = Path(name).read_text(encoding="utf-8-sig")
                parsed, again = mmrb2_scoring.read_predictions(text, name)
            except OSError as exc:
                raise CommandError(f"{name}: cannot read: {exc.strerror or exc}") from None
            except UnicodeDecodeError as exc:
                raise CommandError(f"{name}: not UTF-8 text ({exc.reason})") from None
            except mmrb2_scoring.PredictionsError as exc:
                raise CommandError(str(exc)) from None
            for pair_id in parsed:
                if pair_id in origin:
                    raise CommandError(
                        f"{name}: prediction {pair_id!r} is also in {origin[pair_id]}"
                    )
                origin[pair_id] = name
            predictions.update(parsed)
            repeated += again
        scored = []
        known: set[str] = set()
        for task, path in tasks:
            try:
                pairs = json.loads(path.read_text(encoding="utf-8"))["pairs"]
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise CommandError(f"{path}: not an MMRB2 task file ({exc})") from None
            known.update(pair["id"] for pair in pairs)
            scored.append((task, pairs, predictions))
        scores = mmrb2_scoring.score_tasks(scored)
        unknown = sum(1 for pair_id in predictions if pair_id not in known)
        report = mmrb2_scoring.report_as_dict(scores, unknown_ids=unknown, repeated_ids=repeated)
        report["skipped_files"] = [str(p) for p in skipped]
        if opts["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        lines = [
            "MMRB2 scorer (facebookresearch/MMRB2 evaluate/compute_scores/compute_accuracy.py)",
            "",
            *report["summary"],
            "",
            f"{'Task / prompt_source':<40} {'Accuracy':>8} {'Correct':>8} {'Judged':>7} "
            f"{'Missing':>8}",
        ]
        for task in report["tasks"]:
            for row in [{"source": "", **task}, *task["by_source"]]:
                label = f"  {row['source']}" if row["source"] else task["task"]
                lines.append(
                    f"{label:<40} {row['percent']:>7}% {row['correct']:>8} {row['judged']:>7} "
                    f"{row['missing_pairs']:>8}"
                )
        overall = report["overall"]
        lines += [
            "",
            f"Judgements evaluated: {overall['judged']}; pairs missing: "
            f"{overall['missing_pairs']} of {overall['total_pairs']}; predicted IDs in no "
            f"task file: {unknown}; IDs given twice (the last counts): {repeated}.",
        ]
        self.stdout.write("\n".join(lines))


def _looks_like_mmrb2(path: str) -> bool:
    try:
        with Path(path).open("rb") as fh:
            head = fh.read(1024 * 1024 + 1)
    except OSError as exc:
        raise CommandError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return mmrb2_scoring.looks_like_predictions(head.decode("utf-8-sig", errors="replace"))


def mmrb2_task_files(release: Path) -> tuple[list[tuple[str, Path]], list[Path]]:
    """(task, path) of the task files to score, and the other .json files of
    the folder, left unread. One file is read whatever its name. A folder
    (a release folder's mmrb2/, or the published benchmark/ folder) is read
    only for the task files the official compute_accuracy.py reads, by name:
    t2i.json, edit.json, interleaved.json, reasoning.json; any other .json
    there (a predictions or results file kept beside them) is skipped."""
    if release.is_file():
        return [(release.stem, release)], []
    folder = release / "mmrb2" if (release / "mmrb2").is_dir() else release
    if folder == release and (release / "all_data.json").exists():
        raise CommandError(f"{release}: this release has no mmrb2/ folder (no MMRB2 domain)")
    tasks = [
        (task, folder / f"{task}.json")
        for task in mmrb2_format.TASKS
        if (folder / f"{task}.json").is_file()
    ]
    skipped = sorted(p for p in folder.glob("*.json") if mmrb2_format.task_of(p.name) is None)
    if not tasks:
        names = ", ".join(f"{t}.json" for t in mmrb2_format.TASKS)
        others = f"; other files there are not read: {_names(skipped)}" if skipped else ""
        raise CommandError(f"{release}: no MMRB2 task file ({names} or mmrb2/<task>.json){others}")
    return tasks, skipped


def _names(paths: list[Path]) -> str:
    return ", ".join(p.name for p in paths)
