"""Omni-RewardBench end to end (issue 34): a task file imported through the
one writer (criteria, groups, a tie label), decided as imported (the tie a
resolved tie), released as omni/<task>_preferences.json byte for byte, scored
through the evaluation API per task, shown on the leaderboard; the judge
prompt states the criterion with response1 as A."""

from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.conf import settings
from django.urls import reverse
from PIL import Image
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.importing.records import ImportFailed
from annotate.importing.service import import_items_from_paths
from annotate.models import Item
from curation.benchmarks.omni.benchmark import BENCHMARK
from curation.models import Evaluation, ItemPrediction, ReleaseItem, Verdict
from curation.releases.build import build_release
from tests.curation.releases.test_releases import new_release
from tests.factories import make_member, make_project

pytestmark = pytest.mark.django_db


def omni_records():
    def rec(rid, criteria, pref, **kw):
        return {
            "id": rid,
            "prompt": f"Prompt {rid} ✓",
            "response1": "first",
            "response2": "second",
            "model1": "m-a",
            "model2": "m-b",
            "criteria": criteria,
            "criteria_preference": pref,
            **kw,
        }

    return [rec("t1", "Be brief.", "response1"), rec("t1", "Be exact.", "tie"),
            rec("t2", "Be kind.", "response2", note={"k": [1, None]})]  # fmt: skip


@pytest.fixture
def omni_project(tmp_path):
    project = make_project(slug="omni", seed=3)
    path = tmp_path / "text_to_text_preferences.json"
    path.write_text(json.dumps(omni_records(), indent=4, ensure_ascii=False), encoding="utf-8")
    result = import_items_from_paths(project=project, dataset=path)
    assert result.created == 3
    for item in Item.objects.filter(project=project):
        choice = item.gold_choice or "tie"
        Verdict.objects.filter(pk=item.verdict.pk).update(
            status="agreed" if choice != "tie" else "resolved", final_choice=choice,
            provenance="majority")  # fmt: skip
    return project, path


def release_of(project, **kw):
    domains = list(project.domains.filter(slug__startswith="omni-").values_list("slug", flat=True))
    release = build_release(release_id=new_release(project, domains=domains, **kw).pk)
    assert release.status == "ready", release.error
    return release, Path(settings.MEDIA_ROOT) / release.folder


def test_items_carry_criteria_and_groups(omni_project):
    project, _ = omni_project
    items = {i.external_id: i for i in Item.objects.filter(project=project)}
    a, b = (i for k, i in sorted(items.items()) if k.startswith("text_to_text:t1~"))
    assert a.group_key == b.group_key != items["text_to_text:t2"].group_key
    assert {a.criterion, b.criterion} == {"Be brief.", "Be exact."}
    assert items["text_to_text:t2"].domain.export_category == "omni/text_to_text"


def test_bad_input_names_line_and_field_and_changes_nothing(omni_project, tmp_path):
    project, _ = omni_project
    bad = tmp_path / "text_to_text_preferences.json"
    bad.write_text(json.dumps([{**omni_records()[0], "id": "n1", "criteria_preference": "B"}],
                              indent=4))  # fmt: skip
    with pytest.raises(ImportFailed) as failed:
        import_items_from_paths(project=project, dataset=bad)
    problem = failed.value.problems[0]
    assert (problem.line, problem.field) == (2, "criteria_preference")
    assert Item.objects.filter(project=project).count() == 3


def test_release_is_byte_identical_and_scored_per_task(omni_project, client):
    project, source = omni_project
    release, folder = release_of(project)
    assert (folder / "omni/text_to_text_preferences.json").read_bytes() == source.read_bytes()
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["omni"]["records"] == 3 and manifest["omni"]["changed_from_import"] == 0
    assert manifest["omni"]["preferences"] == {"1": 1, "2": 1, "tie": 1}
    assert "omni/text_to_text_preferences.json" in manifest["files"]
    card = (folder / "README.md").read_text()
    assert "| text_to_text | 3 | `omni/text_to_text_preferences.json` |" in card
    assert "tie-calibrated accuracy" in card
    members = dict(ReleaseItem.objects.filter(release=release).values_list("external_id", "chosen"))
    assert sorted(members.values()) == ["1", "2"]  # the tie is in the file only

    ids = [r["ID"] for r in BENCHMARK.judge_records(release)]
    assert len(ids) == 2  # without ties: the tie-labelled item is not judged
    outputs = {ids[0]: "[[A]]", ids[1]: "[[A]] or maybe [[B]]"}
    body = "".join(json.dumps({"id": k, "output": v}) + "\n" for k, v in outputs.items())
    curator = make_member(project, role="curator")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=curator).key}")
    url = f"/api/v1/projects/{project.slug}/releases/{release.pk}/evaluations/"
    r = api.post(url, {"name": "judge-1", "predictions": io.BytesIO(body.encode()),
                       "predictions_format": "omni"}, format="multipart")  # fmt: skip
    assert r.status_code == 201, r.content
    assert r.json()["accuracy"] == pytest.approx(0.5, abs=1e-9)
    listed = api.get(url).json()
    entry = (listed["results"] if isinstance(listed, dict) else listed)[0]
    assert "omni" not in entry  # its section is in the detail, not the list
    detail = api.get(f"{url}{entry['id']}/").json()
    assert detail["omni"]["tasks"][0]["task"] == "text_to_text"
    assert detail["omni"]["with_ties"] is False and detail["omni"]["kind"] == "judge"
    entry = Evaluation.objects.get(release=release, name="judge-1")
    report = entry.report["omni"]
    per_item = {p.external_id: (p.chosen, p.choice, p.correct, p.category)
                for p in ItemPrediction.objects.filter(evaluation=entry)}  # fmt: skip
    assert per_item == {ids[0]: ("1", "1", True, "text_to_text"),
                        ids[1]: ("2", "", False, "text_to_text")}  # fmt: skip
    assert report["tasks"][0]["unparsed"] == 1 and report["with_ties"] is False
    client.force_login(curator)
    page = client.get(reverse("leaderboard", args=[project.slug, release.pk]))
    assert page.status_code == 200 and "omni-leaderboard" in page.content.decode()
    items_page = client.get(reverse("entry_items", args=[project.slug, release.pk, entry.pk]))
    assert items_page.status_code == 200 and ids[1] in items_page.content.decode()
    annotator = make_member(project, role="annotator")
    client.force_login(annotator)
    assert client.get(reverse("entry_items", args=[project.slug, release.pk, entry.pk])
                      ).status_code in (403, 404)  # fmt: skip


def test_a_changed_preference_changes_only_its_record(omni_project):
    project, source = omni_project
    Verdict.objects.filter(item__external_id="text_to_text:t2").update(final_choice="1")
    _release, folder = release_of(project)
    records = json.loads((folder / "omni/text_to_text_preferences.json").read_text())
    assert records[2]["criteria_preference"] == "response1"
    assert records[:2] == json.loads(source.read_text())[:2]
    assert json.loads((folder / "manifest.json").read_text())["omni"]["changed_from_import"] == 1


def test_judge_prompt_states_the_criterion_with_response1_as_a(omni_project):
    project, _ = omni_project
    release, _ = release_of(project)
    record = BENCHMARK.judge_records(release)[0]
    endpoint = SimpleNamespace(model="m", max_tokens=100, temperature=None)
    body = BENCHMARK.judge_request(record, lambda p: b"", endpoint, swapped=True)
    system, user = body["messages"]
    assert record["criteria"] in system["content"] and "[[C]]" not in system["content"]
    texts = [c["text"] for c in user["content"]]
    assert texts.index("first") < texts.index("second")  # never swapped


def test_release_holds_only_the_omni_layout_and_judge_answers_score(omni_project):
    project, _ = omni_project
    release, _folder = release_of(project)
    rows = list(ReleaseItem.objects.filter(release=release).values_list("external_id", flat=True))
    assert len(rows) == len(set(rows)) == 2  # each side once, the tie in the file only
    records = BENCHMARK.judge_records(release)
    outputs = {(records[0]["ID"], "original"): "\\boxed{A}", (records[1]["ID"], "original"): ""}
    upload = BENCHMARK.judge_predictions(outputs, records, SimpleNamespace(pk=9))
    report = BENCHMARK.score(release, upload).report["omni"]
    gold = {r["ID"]: r["criteria_preference"] for r in records}
    expected = (gold[records[0]["ID"]] == "response1") / 2
    assert report["overall"] == pytest.approx(expected, abs=1e-9)


def test_an_image_editing_task_comes_back_with_its_media(tmp_path):
    project = make_project(slug="omni-img", seed=4)
    (tmp_path / "edit").mkdir()
    for name, colour in (("q.png", "red"), ("a.png", "green"), ("b.png", "blue")):
        Image.new("RGB", (8, 6), colour).save(tmp_path / "edit" / name)
    path = tmp_path / "text_image_to_image_preferences.json"
    record = {
        "id": 5,
        "prompt": "Make it green",
        "image": "edit/q.png",
        "response1": "edit/a.png",
        "response2": "edit/b.png",
        "model1": "x",
        "model2": "y",
        "criteria": "Follows the edit.",
        "criteria_preference": "response1",
    }
    path.write_text(json.dumps([record], indent=4))  # fmt: skip
    assert import_items_from_paths(project=project, dataset=path).created == 1
    item = Item.objects.get(project=project)
    Verdict.objects.filter(pk=item.verdict.pk).update(
        status="agreed", final_choice="1", provenance="majority"
    )
    _release, folder = release_of(project)
    assert (folder / "omni/text_image_to_image_preferences.json").read_bytes() == path.read_bytes()
    for name in ("q.png", "a.png", "b.png"):
        copied = folder / "omni/media_data/edit" / name
        assert copied.read_bytes() == (tmp_path / "edit" / name).read_bytes()


def test_importing_the_same_file_again_changes_nothing(omni_project):
    project, source = omni_project
    before = list(Item.objects.filter(project=project).values_list("pk", "content_hash"))
    result = import_items_from_paths(project=project, dataset=source)
    assert result.created == 0
    assert list(Item.objects.filter(project=project).values_list("pk", "content_hash")) == before
