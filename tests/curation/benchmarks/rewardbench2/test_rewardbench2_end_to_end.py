"""RewardBench 2 end to end (issue 33): records imported through the one
writer (N response slots, chosen first), decided, released as
`rewardbench2/test.jsonl` (import -> export byte for byte), scored through
the evaluation API by the published rules, shown on the leaderboard page,
and judged (4-way verdicts at seeded positions, Ties rated)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.importing.service import import_items_from_paths
from annotate.models import Item, ItemPart, Task
from curation.benchmarks import registry
from curation.benchmarks.rewardbench2 import scoring
from curation.models import Verdict
from curation.releases.build import build_release
from tests.curation.benchmarks.rewardbench2.test_scoring import reference_report
from tests.curation.releases.test_releases import new_release
from tests.factories import make_member, make_project

pytestmark = pytest.mark.django_db

SUBSETS = ("Factuality", "Precise IF", "Math", "Safety", "Focus")


def rb2_records():
    out = []
    for s in SUBSETS:
        for n in range(3):
            out.append(
                {
                    "id": f"{s.lower().replace(' ', '-')}-{n}",
                    "prompt": f"{s} question {n}?",
                    "chosen": [f"right answer {n} ✓"],
                    "rejected": [f"wrong {k}" for k in range(3)],
                    "num_correct": 1,
                    "num_incorrect": 3,
                    "total_completions": 4,
                    "models": ["a", "b", "c", "d"],
                    "subset": s,
                    "additional_metadata": {"n": n, "source": "fixture"},
                }
            )
    for n in (1, 2):
        out.append(
            {"id": f"ref:{n}", "prompt": f"Name a prime below {10 * n}.", "chosen": ["2"],
             "rejected": ["4", "6", "8"], "num_correct": 1, "num_incorrect": 3,
             "total_completions": 4, "models": [], "subset": "Ties",
             "additional_metadata": {}}
        )  # fmt: skip
        out.append(
            {"id": f"tied:{n}", "prompt": f"Name a prime below {10 * n}.",
             "chosen": ["2", "3", "5"], "rejected": ["4", "6", "9"], "num_correct": 3,
             "num_incorrect": 3, "total_completions": 6, "models": [], "subset": "Ties",
             "additional_metadata": {"tied": True}}
        )  # fmt: skip
    return out


@pytest.fixture
def rb2_project(tmp_path):
    project = make_project(slug="rb2", task=Task.BEST_OF_N, seed=5)
    path = tmp_path / "rb2.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rb2_records()))
    result = import_items_from_paths(project=project, dataset=path)
    assert result.created == 19
    Verdict.objects.filter(project=project).update(
        status="agreed", final_choice="1", provenance="gold"
    )
    return project, path


def release_of(project, **kw):
    domains = list(project.domains.filter(slug__startswith="rb2-").values_list("slug", flat=True))
    release = build_release(release_id=new_release(project, domains=domains, **kw).pk)
    assert release.status == "ready", release.error
    return release, Path(settings.MEDIA_ROOT) / release.folder


def test_imported_records_have_n_slots_chosen_first(rb2_project):
    project, _ = rb2_project
    tied = Item.objects.get(project=project, external_id="tied:2")
    slots = list(
        ItemPart.objects.filter(item=tied)
        .exclude(slot="prompt")
        .order_by("slot")
        .values_list("slot", "text")
    )
    assert slots == [(f"response_{k + 1}", t) for k, t in enumerate(["2", "3", "5", "4", "6", "9"])]
    assert tied.domain.slug == "rb2-ties"
    assert tied.domain.export_category == "rewardbench2/Ties"
    assert tied.meta["rewardbench2"]["num_correct"] == 3


def test_import_then_release_is_byte_identical_and_scored_like_rewardbench2(rb2_project, client):
    project, source = rb2_project
    release, folder = release_of(project)
    assert (folder / "rewardbench2/test.jsonl").read_bytes() == source.read_bytes()
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["rewardbench2"]["records"] == 19
    assert manifest["rewardbench2"]["subsets"]["Ties"] == 4
    assert "rewardbench2" in manifest["formats"]
    card = (folder / "README.md").read_text()
    assert "19 prompts in `rewardbench2/test.jsonl`" in card
    assert release.release_items.count() == 19

    # Classifier scores through the evaluation API. Named: MMRB2's detection
    # takes any JSON object line without "ID" (first match wins, see the report).
    rng = np.random.default_rng(1)
    records = rb2_records()
    scores = {
        r["id"]: [float(x) for x in np.round(rng.normal(size=r["total_completions"]), 1)]
        for r in records
    }
    scores["math-0"] = [1.0, 1.0, 0.0, 0.0]  # a tie at the top: half a point
    del scores["focus-2"]  # a missing prediction: 0
    expected_scores = {**scores, "focus-2": [0.0, 1.0, 1.0, 1.0]}  # scores 0 by the rule
    by_subset, overall = reference_report(records, expected_scores)
    curator = make_member(project, role="curator")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=curator).key}")
    url = f"/api/v1/projects/{project.slug}/releases/{release.pk}/evaluations/"
    body = "".join(json.dumps({"id": k, "scores": v}) + "\n" for k, v in scores.items())
    r = api.post(
        url,
        {
            "name": "rm-1",
            "predictions": io.BytesIO(body.encode()),
            "predictions_format": "rewardbench2",
        },
        format="multipart",
    )
    assert r.status_code == 201, r.content
    assert r.json()["scoring"] == "rewardbench2"
    assert r.json()["accuracy"] == pytest.approx(overall, abs=1e-12)
    from curation.models import Evaluation

    report = Evaluation.objects.get(release=release, name="rm-1").report["rewardbench2"]
    got = {s["subset"]: s["score"] for s in report["subsets"]}
    assert got == pytest.approx(by_subset, abs=1e-12)
    assert report["missing"] == 1
    detail = api.get(f"{url}{r.json()['id']}/")
    assert detail.status_code == 200, detail.content
    assert detail.json()["accuracy"] == pytest.approx(overall, abs=1e-12)

    client.force_login(curator)
    page = client.get(reverse("leaderboard", args=[project.slug, release.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "rewardbench2-leaderboard" in html and 'data-name="rm-1"' in html
    assert [b.key for b in page.context["boards"]][-1] == "rewardbench2"


def test_a_decision_against_the_import_changes_the_record(rb2_project):
    project, source = rb2_project
    # Best-of-N: slot 3 picked (an imported "rejected" completion).
    Verdict.objects.filter(project=project, item__external_id="math-1").update(final_choice="2")
    _, folder = release_of(project)
    lines = (folder / "rewardbench2/test.jsonl").read_text().splitlines()
    originals = source.read_text().splitlines()
    changed = [n for n, (a, b) in enumerate(zip(lines, originals, strict=True)) if a != b]
    record = json.loads(lines[changed[0]])
    assert len(changed) == 1 and record["id"] == "math-1"
    assert record["chosen"] == ["wrong 0"]
    assert record["rejected"] == ["right answer 1 ✓", "wrong 1", "wrong 2"]
    assert record["models"] == ["b", "a", "c", "d"]
    assert (record["num_correct"], record["num_incorrect"], record["total_completions"]) == (
        1,
        3,
        4,
    )
    assert record["additional_metadata"] == {"n": 1, "source": "fixture"}


def test_a_rekeyed_release_keeps_the_ties_pairs(rb2_project):
    project, _ = rb2_project
    _, folder = release_of(project, rekey=True)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert "ref:<n>/tied:<n>" in manifest["rewardbench2"]["id_rekey"]
    records = [json.loads(x) for x in (folder / "rewardbench2/test.jsonl").read_text().splitlines()]
    ties = {r["id"]: r for r in records if r["subset"] == "Ties"}
    assert set(ties) == {"ref:0", "ref:1", "tied:0", "tied:1"}
    # A ref and its tied still ask the same question.
    assert ties["ref:0"]["prompt"] == ties["tied:0"]["prompt"]
    others = [r["id"] for r in records if r["subset"] != "Ties"]
    assert all(i.startswith("rb2_") for i in others) and others == sorted(others)


def test_a_judge_run_asks_four_way_and_rates_ties(rb2_project):
    project, _ = rb2_project
    release, _ = release_of(project)
    benchmark = registry.get("rewardbench2")
    records = benchmark.judge_records(release)
    four = [r for r in records if r["mode"] == "four_way"]
    rated = [r for r in records if r["mode"] == "rating"]
    assert len(four) == 15 and len(rated) == 4 + 6 + 4 + 6
    assert benchmark.judge_item_count(release) == len(records)
    for r in four:
        assert r["position"] == scoring.shuffle_position(release.seed, r["ID"])
        assert r["answers"][r["position"]].startswith("right answer")
    # Answers: right for a third, a wrong letter for a third, no verdict for the rest.
    letters = "ABCD"
    outputs, expected = {}, {}
    for n, r in enumerate(four):
        text = [f"[[{letters[r['position']]}]]", f"[[{letters[r['position'] - 1]}]]", "hmm"][n % 3]
        outputs[(r["ID"], "original")] = text
        expected[r["ID"]] = [1, 0, 0.25][n % 3]
    for r in rated:
        correct = r["completion"] in ("2", "3", "5")
        outputs[(r["ID"], "original")] = "Fine. 9" if correct else "Bad. 2"

    class Run:
        pk = 7

    upload = benchmark.judge_predictions(outputs, records, Run())
    scored = benchmark.score(release, upload)
    report = scored.report["rewardbench2"]
    by = {s["subset"]: s for s in report["subsets"]}
    for subset in SUBSETS:
        ids = [r["ID"] for r in four if r["ID"].startswith(subset.lower().replace(" ", "-"))]
        assert by[subset]["score"] == pytest.approx(np.mean([expected[i] for i in ids]))
    # Ties: every correct rated 9, every incorrect 2: accurate; tied spread 0 -> margin
    # inf -> tanh 1 (the published nan_to_num keeps it).
    ties = by["Ties"]["ties"]
    assert (ties["ref_accuracy"], ties["tied_accuracy"]) == (1.0, 1.0)
    assert ties["correctness_preferred"] == 1.0 and ties["margin"] == pytest.approx(1.0)
    assert by["Ties"]["score"] == pytest.approx(0.3 + 0.3 + 0.2 + 0.2 + 0.01)


class FakeRb2Judge:
    """Builds the fake OpenAI server's request check for RewardBench 2: a
    4-way request is known by its question and answers A..D (as the
    published template lays them out), a rating request by its completion."""

    def __new__(cls, *, api_key, model, records):
        from curation.benchmarks.rewardbench2 import judge
        from tests.curation.evaluation.fake_openai import FakeJudge

        class Fake(FakeJudge):
            def _check(self, payload):
                assert payload["model"] == self.model
                *system, user = payload["messages"]
                text = user["content"]
                if system:
                    assert system[0]["content"] == judge.PROMPT_V2
                    return self.four[text]
                return self.rated[text]

        fake = Fake(api_key=api_key, model=model, records=[])
        fake.four, fake.rated = {}, {}
        for r in records:
            text = judge.messages(r)[-1]["content"]
            if r["mode"] == "four_way":
                fake.four[text] = (r["ID"], "original", "ABCD"[r["position"]])
            else:
                fake.rated[text] = (r["ID"], "original", "A")
        return fake


def test_a_judge_run_through_the_runner_scores_rewardbench2_style(rb2_project, settings):
    from curation.evaluation.judge_runs import run_judge, start_judge_run
    from curation.models import JudgeOutput, JudgeRunStatus
    from tests.curation.evaluation.test_judge_runner import API_KEY, MODEL, make_endpoint

    settings.JUDGE_BACKOFF_BASE = 0.01
    settings.JUDGE_MAX_RETRIES = 1
    project, _ = rb2_project
    release, _ = release_of(project)
    records = registry.get("rewardbench2").judge_records(release)
    with FakeRb2Judge(api_key=API_KEY, model=MODEL, records=records) as fake:
        # Right on Factuality, Math and Focus; a wrong letter elsewhere. The
        # fake's answers end in "[[X]]": no rating, so every Ties rating is invalid.
        fake.decide = lambda ext_id, order, right: (
            right if ext_id.startswith(("factuality", "math", "focus")) else "ABCD"[
                ("ABCD".index(right) + 1) % 4]
        )  # fmt: skip
        run = start_judge_run(
            release=release,
            endpoint=make_endpoint(release, fake),
            name="rb2 judge",
            swapped=False,
            concurrency=2,
            user=None,
            enqueue=False,
            scoring="rewardbench2",
        )
        assert not run.swapped and run.progress_total == len(records) == 15 + 20
        run = run_judge(run_id=run.pk)
        assert fake.problems == []
    assert run.status == JudgeRunStatus.COMPLETE, run.error
    assert JudgeOutput.objects.filter(run=run).count() == 35
    report = run.evaluation.report["rewardbench2"]
    got = {s["subset"]: s["score"] for s in report["subsets"]}
    assert got == {"Factuality": 1.0, "Precise IF": 0.0, "Math": 1.0, "Safety": 0.0,
                   "Focus": 1.0, "Ties": 0.0}  # fmt: skip
    # All ratings invalid (-1): nothing accurate, margins 0/0 -> nan -> 0.
    assert report["subsets"][-1]["ties"]["margin"] == 0.0
    assert run.evaluation.accuracy == pytest.approx(3 / 6)


def test_a_reimport_is_a_no_op_and_a_pairwise_project_refuses_four_slots(rb2_project, tmp_path):
    from annotate.importing.records import ImportFailed

    project, path = rb2_project
    again = import_items_from_paths(project=project, dataset=path)
    assert (again.created, again.unchanged) == (0, 19)
    pairwise = make_project(slug="rb2-pairs")
    with pytest.raises(ImportFailed) as failed:
        import_items_from_paths(project=pairwise, dataset=path)
    first = failed.value.problems[0]
    assert (first.file, first.line, first.field) == ("rb2.jsonl", 1, "chosen/rejected")
    assert Item.objects.filter(project=pairwise).count() == 0
