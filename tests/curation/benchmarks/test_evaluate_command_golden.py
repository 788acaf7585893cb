"""Golden outputs of `manage.py evaluate` (issue 32): what the command
prints (stdout and stderr, text and --json) and the errors it stops with,
for both built-in benchmarks' predictions, auto-detected and named. Written
once on the command as it was before it asked the benchmark registry (one
branch per format); the registry's command must give the same bytes
(`GOLDEN_WRITE=1` writes them again, for a deliberate change only).

Temporary paths are written as `<tmp>`; the elapsed time of the verbose
line as `<s>`."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path

from django.core.management import call_command
from django.core.management.base import CommandError

from tests.annotate.importing.test_mmrb2 import published_fixture
from tests.curation.evaluation.test_mmrb2_evaluation import PREDICTIONS
from tests.curation.evaluation.test_official_compat import LINES, RECORDS
from tests.curation.evaluation.test_scoring import bucket_records, judge

GOLDEN = Path(__file__).parent / "golden" / "evaluate_command.json"


def run(tmp_path: Path, *args: str) -> dict[str, str]:
    out, err = io.StringIO(), io.StringIO()
    result = {}
    try:
        call_command("evaluate", *args, stdout=out, stderr=err)
    except CommandError as exc:
        result["error"] = str(exc)
    result["stdout"] = out.getvalue()
    result["stderr"] = err.getvalue()
    return {
        key: re.sub(r"in \d+\.\d+ s\)", "in <s> s)", value.replace(str(tmp_path), "<tmp>"))
        for key, value in result.items()
    }


def write_jsonl(path: Path, objs) -> str:
    path.write_text("".join(json.dumps(obj) + "\n" for obj in objs))
    return str(path)


def mrb_cases(tmp_path: Path) -> dict[str, dict[str, str]]:
    folder = tmp_path / "mrb"
    folder.mkdir()
    (folder / "all_data.json").write_text(json.dumps(bucket_records()))
    records = bucket_records()
    preds = write_jsonl(folder / "p.jsonl", [judge(r["ID"], "A") for r in records[:-1]])
    swapped = write_jsonl(folder / "s.jsonl", [judge("mathvista_1", "B")])
    compat = tmp_path / "compat"
    compat.mkdir()
    (compat / "all_data.json").write_text(json.dumps(RECORDS))
    compat_preds = write_jsonl(compat / "p.jsonl", LINES)
    bad = folder / "bad.jsonl"
    bad.write_text('{"ID": "a", "Label": "A"}\n{"ID": "a", "score_1": 1}\n')
    bom = folder / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + Path(preds).read_bytes())
    f = str(folder)
    return {
        "mrb text, swapped": run(tmp_path, f, preds, "--swapped", swapped),
        "mrb json, swapped": run(tmp_path, f, preds, "--swapped", swapped, "--json"),
        "mrb named, all_data.json": run(
            tmp_path, str(folder / "all_data.json"), preds, "--format", "mrb"
        ),
        "mrb text, show 2 ids, verbose": run(tmp_path, f, preds, "--show-ids", "2", "-v", "2"),
        "mrb byte-order mark": run(tmp_path, f, str(bom), "--json"),
        "mrb official compat text": run(tmp_path, str(compat), compat_preds, "--official-compat"),
        "mrb official compat json": run(
            tmp_path, str(compat), compat_preds, "--official-compat", "--json"
        ),
        "mrb bad line": run(tmp_path, f, str(bad)),
        "mrb two files": run(tmp_path, f, preds, preds),
        "mrb missing predictions": run(tmp_path, f, str(folder / "nope.jsonl"), "--format", "mrb"),
        "mrb missing swapped": run(tmp_path, f, preds, "--swapped", str(folder / "nope.jsonl")),
        "mrb missing release": run(tmp_path, str(tmp_path / "nowhere"), preds),
        "auto missing predictions": run(tmp_path, f, str(folder / "nope.jsonl")),
        "unknown format": run(tmp_path, f, preds, "--format", "nope"),
    }


def mmrb2_cases(tmp_path: Path) -> dict[str, dict[str, str]]:
    bench = tmp_path / "benchmark"
    published_fixture(bench)
    preds = bench / "judge-predictions.json"  # beside the task files: skipped and named
    preds.write_text(json.dumps(PREDICTIONS, indent=2))
    (bench / "results.json").write_text('{"overall": 0.5}')
    t2i_ids = {p["id"] for p in json.loads((bench / "t2i.json").read_text())["pairs"]}
    t2i = tmp_path / "t2i-preds.json"
    t2i.write_text(json.dumps({k: v for k, v in PREDICTIONS.items() if k in t2i_ids}))
    rest = tmp_path / "rest-preds.json"
    rest.write_text(json.dumps({k: v for k, v in PREDICTIONS.items() if k not in t2i_ids}))
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + preds.read_bytes())
    release = tmp_path / "release"
    (release / "mmrb2").mkdir(parents=True)
    for task in ("t2i", "edit"):
        (release / "mmrb2" / f"{task}.json").write_bytes((bench / f"{task}.json").read_bytes())
    (release / "all_data.json").write_text("[]")
    mrb_only = tmp_path / "mrb-only"
    mrb_only.mkdir()
    (mrb_only / "all_data.json").write_text("[]")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "preds.json").write_text("{}")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "t2i.json").write_text('{"no pairs": []}')
    not_json = tmp_path / "not.json"
    not_json.write_text('{"a": {"forward": [{"judgement": "A"}]}, oops')
    b, p = str(bench), str(preds)
    return {
        "mmrb2 folder text": run(tmp_path, b, p),
        "mmrb2 folder json": run(tmp_path, b, p, "--json"),
        "mmrb2 per-task files": run(tmp_path, b, str(t2i), str(rest)),
        "mmrb2 one task file": run(tmp_path, str(bench / "edit.json"), p, "--json"),
        "mmrb2 release folder": run(tmp_path, str(release), str(t2i), str(rest)),
        "mmrb2 byte-order mark": run(tmp_path, b, str(bom)),
        "mmrb2 named": run(tmp_path, b, p, "--format", "mmrb2", "--json"),
        "mmrb2 with --swapped": run(tmp_path, b, p, "--swapped", p),
        "mmrb2 with --official-compat": run(tmp_path, b, p, "--official-compat"),
        "mmrb2 id in two files": run(tmp_path, b, str(t2i), str(t2i)),
        "mmrb2 release without task files": run(tmp_path, str(mrb_only), p),
        "mmrb2 folder without task files": run(tmp_path, str(empty), str(empty / "preds.json")),
        "mmrb2 broken task file": run(tmp_path, str(broken), p),
        "mmrb2 predictions not json": run(tmp_path, b, str(not_json), "--format", "mmrb2"),
        "mmrb2 second file missing": run(tmp_path, b, p, str(tmp_path / "nope.json")),
    }


def test_the_evaluate_command_prints_the_golden_bytes(tmp_path):
    outputs = {**mrb_cases(tmp_path), **mmrb2_cases(tmp_path)}
    if os.environ.get("GOLDEN_WRITE"):
        GOLDEN.write_text(json.dumps(outputs, indent=1, ensure_ascii=False) + "\n")
    expected = json.loads(GOLDEN.read_text())
    assert sorted(outputs) == sorted(expected)
    for case, output in outputs.items():
        assert output == expected[case], case


def test_the_golden_cases_cover_every_outcome():
    """The golden file holds reports and refusals of both benchmarks."""
    expected = json.loads(GOLDEN.read_text())
    errors = [case for case, output in expected.items() if "error" in output]
    reports = [case for case, output in expected.items() if "error" not in output]
    assert len(errors) >= 10 and len(reports) >= 10
    assert any(output["stderr"] for output in expected.values())
    assert all(output["stdout"] for case, output in expected.items() if case in reports)
