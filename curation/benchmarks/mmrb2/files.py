"""Multimodal RewardBench 2 predictions scored against task files on disk
(the evaluate command), as the benchmark's compute_accuracy.py does: one or
more predictions files (e.g. one per task) against a release folder's
mmrb2/<task>.json, a folder of task files, or one task file."""

from __future__ import annotations

import json
from pathlib import Path

from annotate.importing.formats.mmrb2 import taskfile
from curation.benchmarks.base import EvaluationError, FileOptions, FileScore
from curation.benchmarks.mmrb2 import scoring

RELEASE_HELP = (
    "MMRB2: a release folder (its mmrb2/<task>.json), a folder of task files (only "
    "t2i.json, edit.json, interleaved.json and reasoning.json are read; other .json files "
    "there are skipped and named), or one task file"
)
PREDICTIONS_HELP = (
    'MMRB2: one or more JSON files {"<pair id>": {"forward": [{"judgement": ...}], '
    '"reverse": [...]}} (e.g. one per task, as compute_accuracy.py takes them)'
)
HEADER = "MMRB2 scorer (facebookresearch/MMRB2 evaluate/compute_scores/compute_accuracy.py)"


def score_files(release: str, predictions: list[str], options: FileOptions) -> FileScore:
    if options.swapped or options.official_compat:
        raise EvaluationError(
            "--swapped and --official-compat are MRB options: MMRB2 predictions carry "
            "both orders (forward, reverse) in one file."
        )
    tasks, skipped = task_files(Path(release))
    if skipped:
        options.warn(
            f"Skipped {len(skipped)} file(s) of {skipped[0].parent} that are not MMRB2 "
            f"task files (only {', '.join(f'{t}.json' for t in taskfile.TASKS)} are "
            f"read): {_names(skipped)}"
        )
    parsed, repeated = read_predictions(predictions)
    scored = []
    known: set[str] = set()
    for task, path in tasks:
        try:
            pairs = json.loads(path.read_text(encoding="utf-8"))["pairs"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise EvaluationError(f"{path}: not an MMRB2 task file ({exc})") from None
        known.update(pair["id"] for pair in pairs)
        scored.append((task, pairs, parsed))
    scores = scoring.score_tasks(scored)
    unknown = sum(1 for pair_id in parsed if pair_id not in known)
    report = scoring.report_as_dict(scores, unknown_ids=unknown, repeated_ids=repeated)
    report["skipped_files"] = [str(p) for p in skipped]
    return FileScore(report=report, text=lambda: text_report(report))


def read_predictions(names: list[str]) -> tuple[dict, int]:
    """Every file's predictions (an ID in two files is refused) and the
    number of IDs given twice within a file."""
    predictions: dict = {}
    origin: dict[str, str] = {}
    repeated = 0
    for name in names:
        try:
            text = Path(name).read_text(encoding="utf-8-sig")
            parsed, again = scoring.read_predictions(text, name)
        except OSError as exc:
            raise EvaluationError(f"{name}: cannot read: {exc.strerror or exc}") from None
        except UnicodeDecodeError as exc:
            raise EvaluationError(f"{name}: not UTF-8 text ({exc.reason})") from None
        except scoring.PredictionsError as exc:
            raise EvaluationError(str(exc)) from None
        for pair_id in parsed:
            if pair_id in origin:
                raise EvaluationError(
                    f"{name}: prediction {pair_id!r} is also in {origin[pair_id]}"
                )
            origin[pair_id] = name
        predictions.update(parsed)
        repeated += again
    return predictions, repeated


def text_report(report: dict) -> str:
    lines = [
        HEADER,
        "",
        *report["summary"],
        "",
        f"{'Task / prompt_source':<40} {'Accuracy':>8} {'Correct':>8} {'Judged':>7} {'Missing':>8}",
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
        f"task file: {report['unknown_ids']}; IDs given twice (the last counts): "
        f"{report['repeated_ids']}.",
    ]
    return "\n".join(lines) + "\n"


def task_files(release: Path) -> tuple[list[tuple[str, Path]], list[Path]]:
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
        raise EvaluationError(f"{release}: this release has no mmrb2/ folder (no MMRB2 domain)")
    tasks = [
        (task, folder / f"{task}.json")
        for task in taskfile.TASKS
        if (folder / f"{task}.json").is_file()
    ]
    skipped = sorted(p for p in folder.glob("*.json") if taskfile.task_of(p.name) is None)
    if not tasks:
        names = ", ".join(f"{t}.json" for t in taskfile.TASKS)
        others = f"; other files there are not read: {_names(skipped)}" if skipped else ""
        raise EvaluationError(
            f"{release}: no MMRB2 task file ({names} or mmrb2/<task>.json){others}"
        )
    return tasks, skipped


def _names(paths: list[Path]) -> str:
    return ", ".join(p.name for p in paths)
