"""VL-RewardBench as published, end to end (issue 34): the official records
(tests/curation/benchmarks/vlrb/official.py) imported through the one
writer (domains by the official id grouping, gold from human_ranking),
released as `vlrb/vl_rewardbench.jsonl` byte for byte, scored through the
API as cal.py scores (per-item results, leaderboard, evaluate command), and
judged k times with seeded swaps through the judge-call seam: its members
with a fake run object, and a run through the judge runner against the fake
OpenAI server."""

from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.conf import settings
from django.core.management import call_command
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.importing.records import ImportFailed
from annotate.importing.service import import_items_from_paths
from annotate.models import Item
from curation.benchmarks import registry
from curation.benchmarks.vlrb import judge, scoring
from curation.benchmarks.vlrb.benchmark import BENCHMARK, release_pairs
from curation.models import Evaluation, ItemPrediction, Verdict
from curation.releases.build import build_release
from tests.curation.benchmarks.vlrb import official
from tests.curation.evaluation.fake_openai import FakeJudge
from tests.curation.releases.test_releases import new_release
from tests.factories import make_member, make_project, png_bytes

pytestmark = pytest.mark.django_db
GROUPS = ["general", "hallucination", "reasoning"]


def write_official(folder: Path, rows: list[dict] | None = None) -> Path:
    rows = rows or official.records()
    for n, row in enumerate(rows):
        path = folder / row["image"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(png_bytes(color=(n * 13 % 256, 40, 90)))
    path = folder / "vl_rewardbench.jsonl"
    # Written as the Hub's JSON lines are: ensure_ascii, ", " and ": " (kept byte for byte).
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def decide_as_imported(project):
    for item in Item.objects.filter(project=project):
        Verdict.objects.filter(pk=item.verdict.pk).update(
            status="agreed", final_choice=item.gold_choice, provenance="majority"
        )


@pytest.fixture
def vlrb_project(tmp_path):
    project = make_project(slug="vlrb", seed=3)
    source = write_official(tmp_path)
    result = import_items_from_paths(project=project, dataset=source, fmt="vlrb")
    assert result.created == len(official.PAIRS)
    decide_as_imported(project)
    return project, source


def release_of(project, **kw):
    release = build_release(release_id=new_release(project, domains=GROUPS, **kw).pk)
    assert release.status == "ready", release.error
    return release, Path(settings.MEDIA_ROOT) / release.folder


def test_import_groups_by_the_official_ids_and_takes_gold_from_human_ranking(vlrb_project):
    project, _ = vlrb_project
    items = {i.external_id: i for i in Item.objects.filter(project=project)}
    domains = {x: i.domain.export_category for x, i in items.items()}
    assert domains["RLAIF-V_0"] == domains["RLHF-V-Dataset_3"] == "hallucination"
    assert domains["rlaif-v_4"] == domains["Mathverse_14"] == domains["plainid10"] == "general"
    assert domains["mmmu-pro_13"] == "reasoning"
    assert sum(d == "hallucination" for d in domains.values()) == 7
    assert items["RLAIF-V_0"].gold_choice == "1" and items["RLAIF-V_1"].gold_choice == "2"
    assert items["RLAIF-V_0"].meta["vlrb"]["dataset"] == "rlaif-v"
    assert items["RLAIF-V_0"].image_id is not None


def test_the_hub_parquet_is_still_the_generic_parquet_formats(tmp_path):
    from annotate.importing.formats import DatasetSource, find

    path = tmp_path / "test-00000-of-00001.parquet"
    path.write_bytes(b"PAR1")
    assert find(DatasetSource(path), None).NAMES[0] == "parquet"


@pytest.mark.parametrize(
    "change, line, field",
    [
        ({"human_ranking": [0, 0]}, 2, "human_ranking"),
        ({"human_ranking": [True, False]}, 2, "human_ranking"),
        ({"response": ["only one"]}, 2, "response"),
        ({"query": None}, 2, "query"),
        ({"image": "../escape.png"}, 2, "image"),
        ({"models": "a"}, 2, "models"),
    ],
)
def test_bad_input_names_line_and_field_and_changes_nothing(tmp_path, change, line, field):
    project = make_project()
    rows = official.records()[:3]
    rows[1] = {**rows[1], **change}
    with pytest.raises(ImportFailed) as failed:
        import_items_from_paths(project=project, dataset=write_official(tmp_path, rows))
    problem = failed.value.problems[0]
    assert (problem.file, problem.line, problem.field) == ("vl_rewardbench.jsonl", line, field)
    assert not Item.objects.filter(project=project).exists()


def test_release_is_byte_identical_and_scored_as_cal_py(vlrb_project, client, tmp_path):
    project, source = vlrb_project
    release, folder = release_of(project)
    assert (folder / "vlrb/vl_rewardbench.jsonl").read_bytes() == source.read_bytes()
    assert (folder / "vlrb/images/img_0.png").read_bytes() == (
        source.parent / "images/img_0.png"
    ).read_bytes()
    manifest = json.loads((folder / "manifest.json").read_text())
    section = manifest["vlrb"]
    assert section["groups"] == {"general": 6, "hallucination": 7, "reasoning": 3}
    assert section["changed_from_import"] == 0 and section["records"] == 16
    assert "vlrb/vl_rewardbench.jsonl" in manifest["files"]
    card = (folder / "README.md").read_text()
    assert "16 pairs in `vlrb/vl_rewardbench.jsonl`" in card and "cal.py" in card

    # A changed decision changes only its line (human_ranking flipped).
    Verdict.objects.filter(item__external_id="plainid10").update(final_choice="1")
    _r2, folder2 = release_of(project, version="v2")
    new, old = (p.read_text().splitlines() for p in (folder2 / "vlrb/vl_rewardbench.jsonl", source))
    assert [n for n, (a, b) in enumerate(zip(new, old, strict=True)) if a != b] == [10]
    assert json.loads(new[10])["human_ranking"] == [0, 1]
    Verdict.objects.filter(item__external_id="plainid10").update(final_choice="2")

    expected = official.cal_py([json.loads(x) for x in official.official_lines().splitlines()])
    curator = make_member(project, role="curator")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=curator).key}")
    url = f"/api/v1/projects/{project.slug}/releases/{release.pk}/evaluations/"
    body = official.official_lines().encode()
    r = api.post(url, {"name": "judge-1", "predictions": io.BytesIO(body)}, format="multipart")
    assert r.status_code == 201, r.content
    assert r.json()["scoring"] == "vlrb"
    assert r.json()["accuracy"] == pytest.approx(expected["overall"], abs=1e-9)
    evaluation = Evaluation.objects.get(release=release, name="judge-1")
    detail = api.get(f"{url}{evaluation.pk}/").json()
    assert detail["vlrb"]["macro"] == pytest.approx(expected["macro"], abs=1e-9)
    assert detail["vlrb"]["undecided"] == 3 and detail["vlrb"]["missing"] == 1
    rows = {p.external_id: p for p in ItemPrediction.objects.filter(evaluation=evaluation)}
    assert len(rows) == 15 and "RLHF_15" not in rows  # every predicted pair, decided or not
    assert rows["RLAIF-V_1"].choice == "1" and not rows["RLAIF-V_1"].correct
    assert rows["rlaif-v_4"].choice == "" and rows["RLAIF-V_0"].correct

    client.force_login(curator)
    page = client.get(reverse("leaderboard", args=[project.slug, release.pk]))
    html = page.content.decode()
    assert page.status_code == 200 and "vlrb-leaderboard" in html and 'data-name="judge-1"' in html
    assert f"{100 * expected['macro']:.2f}" in html
    # Per-item results: the wrong pairs of a group, filterable by source dataset.
    items_url = reverse("entry_items", args=[project.slug, release.pk, evaluation.pk])
    page = client.get(items_url, {"category": "hallucination"})
    html = page.content.decode()
    assert page.status_code == 200 and "RLAIF-V_1" in html and "RLAIF-V_0" not in html
    assert "rlaif-v" in html and "reasoning" in html  # the filters' options

    preds = tmp_path / "preds.jsonl"
    preds.write_bytes(official.studio_lines().encode())
    out = io.StringIO()
    call_command("evaluate", str(folder), str(preds), "--format", "vlrb", "--json", stdout=out)
    assert json.loads(out.getvalue())["vlrb"]["overall"] == pytest.approx(expected["overall"])


def test_judge_calls_are_k_runs_with_seeded_swaps_rederived_when_scoring(vlrb_project):
    project, _ = vlrb_project
    release, _folder = release_of(project)
    records = BENCHMARK.judge_records(release)
    assert BENCHMARK.judge_item_count(release) == len(records) == 16
    record = next(r for r in records if r["ID"] == "RLAIF-V_1")
    assert record["Image"] == "vlrb/images/img_1.png"
    calls = BENCHMARK.judge_calls(record, 77, both_orders=True)
    assert calls == [f"run{n}" for n in range(1, 11)] and all(len(c) <= 16 for c in calls)
    endpoint = SimpleNamespace(model="m", temperature=None, max_tokens=512)
    read = {}

    def read_image(name):
        read[name] = True
        return b"png-bytes"

    numbers = []
    for call in calls:
        body = BENCHMARK.judge_call_request(record, read_image, endpoint, call=call, seed=77)
        text = body["messages"][0]["content"][0]["text"]
        first = text.split("Answer 1: ", 1)[1].split("\n", 1)[0]
        numbers.append(0 if first == record["response"][0] else 1)
        assert body["temperature"] == 0.2 and body["top_p"] == 0.2
        assert "<image>" not in text and text.startswith(" You are a highly capable")
        url = body["messages"][0]["content"][1]["image_url"]["url"]
        assert url.startswith("data:image/png;base64,")
    assert numbers == [judge.random_number(77, "RLAIF-V_1", c) for c in calls]
    assert set(numbers) == {0, 1}  # both orders occur over ten calls
    assert read == {"vlrb/images/img_1.png": True}
    again = BENCHMARK.judge_call_request(record, read_image, endpoint, call="run3", seed=77)
    assert again == BENCHMARK.judge_call_request(record, read_image, endpoint, call="run3", seed=77)

    # The answers: each call names the humans' pick in the order it was shown.
    pairs = {p.id: p for p in release_pairs(release)}
    outputs = {}
    for r in records:
        for call in calls[: 3 if r["ID"] != "RLHF_15" else 0]:
            n = judge.random_number(77, r["ID"], call)
            preferred = r["human_ranking"].index(0)
            shown = preferred if n == 0 else 1 - preferred
            outputs[(r["ID"], call)] = f"Therefore Answer {shown + 1} is better"
    upload = BENCHMARK.judge_predictions(outputs, records, SimpleNamespace(pk=5, seed=77))
    runs, _, _ = scoring.read_predictions(
        upload.predictions.decode().splitlines(), upload.filename, list(pairs.values())
    )
    report = scoring.score(list(pairs.values()), runs)
    assert report["overall"] == 1.0 and report["missing"] == 1 and report["k"] == 3
    assert registry.detect(upload.predictions.decode()[:1000]).key == "vlrb"

    # The runner before the seam: one answer per order, scored as runs 0 and 1.
    record = records[0]
    preferred = record["human_ranking"].index(0)
    legacy = {
        (record["ID"], "original"): f"Therefore Answer {preferred + 1} is better",
        (record["ID"], "swapped"): f"Therefore Answer {2 - preferred} is better",
    }
    upload = BENCHMARK.judge_predictions(legacy, records, SimpleNamespace(pk=6))
    line = json.loads(upload.predictions)
    assert [r["random_number"] for r in line["runs"]] == [0, 1]
    assert BENCHMARK.judge_request(record, read_image, endpoint, swapped=True) == (
        judge.request_body(record, b"png-bytes", endpoint, number=1)
    )


class FakeVL(FakeJudge):
    """Knows each pair by its first response; answers in cal.py's words
    which shown answer the humans preferred (the run is then all agree)."""

    def _check(self, payload):
        (message,) = payload["messages"]
        text = message["content"][0]["text"]
        assert text.startswith(" You are a highly capable"), "not the official prompt"
        assert message["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
        first = text.split("Answer 1: ", 1)[1].split("\n", 1)[0]
        pair_id, slot, preferred = self.by_response[first]
        shown = preferred if slot == 0 else 1 - preferred  # preferred's shown position
        return pair_id, f"shown{slot}", f"Therefore Answer {shown + 1} is better"


def test_a_judge_run_sends_k_calls_per_pair_and_scores_them_as_cal_py(vlrb_project, settings):
    from curation.evaluation.judge_runs import run_judge, start_judge_run
    from curation.models import JudgeOutput, JudgeRunStatus
    from tests.curation.evaluation.test_judge_runner import API_KEY, MODEL, make_endpoint

    settings.JUDGE_BACKOFF_BASE = 0.01
    settings.JUDGE_MAX_RETRIES = 1
    project, _ = vlrb_project
    release, _folder = release_of(project)
    records = BENCHMARK.judge_records(release)
    with FakeVL(api_key=API_KEY, model=MODEL, records=[]) as fake:
        fake.by_response = {
            r["response"][k]: (r["ID"], k, r["human_ranking"].index(0))
            for r in records for k in (0, 1)
        }  # fmt: skip
        run = start_judge_run(
            release=release, endpoint=make_endpoint(release, fake), name="judge-k",
            swapped=False, concurrency=2, user=None, enqueue=False, scoring="vlrb",
        )  # fmt: skip
        run = run_judge(run_id=run.pk)
    assert fake.problems == []
    assert run.status == JudgeRunStatus.COMPLETE, run.error
    assert JudgeOutput.objects.filter(run=run).count() == judge.JUDGE_RUNS * len(records)
    # Each call was shown in the order its key and the run's seed draw.
    for r in records:
        swaps = sum(judge.random_number(run.seed, r["ID"], c) for c in judge.CALLS)
        assert fake.requests[(r["ID"], "shown1")] == swaps
    report = run.evaluation.report["vlrb"]
    assert report["overall"] == 1.0 and report["k"] == judge.JUDGE_RUNS
    assert report["total"] == len(records) and report["macro"] == 1.0
