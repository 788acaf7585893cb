"""MM-RLHF-RewardBench end to end (issue 34): the published file imported
through the one writer (pairs grouped by prompt id, a frames folder as an
image strip), decided, released in the published layout (byte for byte
when nothing changed), scored by Acc and Acc+ through the API and the
evaluate command, with per-pair results and its leaderboard columns."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.importing.records import ImportFailed
from annotate.importing.service import import_items_from_paths
from annotate.models import Item, ItemPart
from curation.benchmarks import registry
from curation.benchmarks.base import Upload
from curation.models import Evaluation, ItemPrediction, ReleaseItem, Verdict
from curation.releases.build import build_release
from tests.annotate.importing import mmrlhf_sets
from tests.curation.benchmarks.mmrlhf.test_scoring import published
from tests.curation.releases.test_releases import new_release
from tests.factories import make_member, make_project

pytestmark = pytest.mark.django_db
FILE = "mmrlhf/mm_rlhf_rewardbench.jsonl"


def decide(project, choice="1", **only):
    status = "resolved" if choice == "tie" else "agreed"
    Verdict.objects.filter(item__project=project, **only).update(
        status=status, final_choice=choice, provenance="majority"
    )


@pytest.fixture
def mm_project(tmp_path):
    project = make_project(slug="mm", seed=5)
    path = mmrlhf_sets.write(tmp_path / "src", ensure_ascii=False)
    result = import_items_from_paths(project=project, dataset=path, fmt="mmrlhf")
    assert result.created == len(mmrlhf_sets.rows())
    decide(project)
    return project, path


def release_of(project, **kw):
    domains = list(
        project.domains.filter(slug__startswith="mmrlhf-").values_list("slug", flat=True)
    )
    release = build_release(release_id=new_release(project, domains=domains, **kw).pk)
    assert release.status == "ready", release.error
    return release, Path(settings.MEDIA_ROOT) / release.folder


def test_pairs_are_grouped_items_with_their_media(mm_project):
    project, _ = mm_project
    first = Item.objects.get(project=project, external_id="mcq_000#2")
    assert first.group_key == "mcq_000" and first.domain.export_category == "mmrlhf/mcq"
    assert Item.objects.filter(project=project, group_key="mcq_004").count() == 6
    video = Item.objects.get(project=project, external_id="video_007#1")
    prompt = ItemPart.objects.filter(item=video, slot="prompt").order_by("position")
    assert [p.kind for p in prompt] == ["image", "image", "image", "text"]
    assert [p.source_path for p in prompt][:3] == [
        "video/clip_007/frame_1.jpg", "video/clip_007/frame_2.jpg", "video/clip_007/frame_10.jpg"
    ]  # fmt: skip


def test_reimport_changes_nothing_and_bad_input_writes_nothing(mm_project, tmp_path):
    project, path = mm_project
    again = import_items_from_paths(project=project, dataset=path, fmt="mmrlhf")
    assert again.created == 0
    rows = mmrlhf_sets.rows()
    rows[4]["image"] = "../escape.png"
    bad = mmrlhf_sets.write(tmp_path / "bad", rows[:4])
    bad.write_text(bad.read_text() + json.dumps(rows[4]) + "\n")
    with pytest.raises(ImportFailed) as failed:
        import_items_from_paths(project=project, dataset=bad, fmt="mmrlhf")
    problem = failed.value.problems[0]
    assert (problem.line, problem.field) == (5, "image")
    assert Item.objects.filter(project=project).count() == len(mmrlhf_sets.rows())


def test_release_is_byte_identical_and_scored_by_acc_and_acc_plus(mm_project, client, tmp_path):
    project, source = mm_project
    release, folder = release_of(project)
    assert (folder / FILE).read_bytes() == source.read_bytes()
    for row in mmrlhf_sets.rows():
        if "image" in row:
            assert (folder / "mmrlhf" / row["image"]).read_bytes() == (
                source.parent / row["image"]).read_bytes()  # fmt: skip
    for frame in mmrlhf_sets.VIDEO_FRAMES:
        assert (folder / "mmrlhf/video/clip_007" / frame).is_file()
    manifest = json.loads((folder / "manifest.json").read_text())
    section = manifest["mmrlhf"]
    assert section["pairs"] == len(mmrlhf_sets.rows()) and section["prompt_ids"] == 8
    assert section["frames"] == {"video/clip_007": list(mmrlhf_sets.VIDEO_FRAMES)}
    assert FILE in manifest["files"] and "mmrlhf" in manifest["formats"]
    assert "MM-RLHF-RewardBench as published" in (folder / "README.md").read_text()
    members = ReleaseItem.objects.filter(release=release)
    assert members.count() == len(mmrlhf_sets.rows())
    assert set(
        members.filter(external_id__startswith="video").values_list("better", flat=True)
    ) == {"A"}

    rows = mmrlhf_sets.rows()
    rewards = [[1.0, 0.0]] * len(rows)
    rewards[1] = [0.5, 0.5]  # a tie: wrong, and mcq_000 fails Acc+
    rewards[3] = [0.0, 2.0]  # wrong
    lines = [{"id": r["id"], "rewards": w} for r, w in zip(rows, rewards, strict=True)]
    del lines[-1]  # the video's second pair: missing
    body = "".join(json.dumps(x) + "\n" for x in lines)
    expected = published([dict(r, rewards=w) for r, w in zip(rows, [*rewards[:-1], [0, 0]],
                                                               strict=True)])  # fmt: skip
    curator = make_member(project, role="curator")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=curator).key}")
    url = f"/api/v1/projects/{project.slug}/releases/{release.pk}/evaluations/"
    r = api.post(url, {"name": "rm-1", "predictions": io.BytesIO(body.encode()),
                       "predictions_format": "mmrlhf"}, format="multipart")  # fmt: skip
    assert r.status_code == 201, r.content
    assert r.json()["accuracy"] == pytest.approx(expected["overall"]["accuracy"], abs=1e-9)
    evaluation = Evaluation.objects.get(release=release, name="rm-1")
    report = evaluation.report["mmrlhf"]
    assert report["acc_plus"] == pytest.approx(expected["overall"]["acc_plus"], abs=1e-9)
    assert report["missing"] == 1
    detail = api.get(f"{url}{evaluation.pk}/").json()
    assert detail["mmrlhf"]["acc_plus"] == pytest.approx(report["acc_plus"], abs=1e-9)
    # Unauthenticated: refused.
    assert APIClient().post(url, {"name": "x"}).status_code in (401, 403)
    preds = ItemPrediction.objects.filter(evaluation=evaluation)
    assert preds.count() == len(rows) - 1
    tie = preds.get(external_id="mcq_000#2")
    assert (tie.correct, tie.choice, tie.sub_bucket) == (False, "", "mcq_000")
    assert preds.get(external_id="1#2").choice == "2"

    client.force_login(curator)
    html = client.get(reverse("leaderboard", args=[project.slug, release.pk])).content.decode()
    assert "mmrlhf-leaderboard" in html and 'data-name="rm-1"' in html and "Acc+ %" in html
    # The per-pair results: wrong pairs by default, filterable by category.
    entry = reverse("entry_items", args=[project.slug, release.pk, evaluation.pk])
    page = client.get(entry)
    assert page.status_code == 200 and "mcq_000#2" in page.content.decode()
    assert "mcq_000#1" not in page.content.decode()
    stranger = make_member(make_project(slug="other"), role="curator")
    client.force_login(stranger)
    assert client.get(entry).status_code == 404
    client.force_login(curator)

    predictions = tmp_path / "preds.jsonl"
    predictions.write_text(body)
    out = io.StringIO()
    call_command("evaluate", str(folder), str(predictions), "--format", "mmrlhf", "--json",
                 stdout=out)  # fmt: skip
    assert json.loads(out.getvalue())["mmrlhf"] == report
    text = io.StringIO()
    call_command("evaluate", str(folder), str(predictions), "--format", "mmrlhf", stdout=text)
    assert "overall" in text.getvalue() and "Acc+" in text.getvalue()


def test_a_decision_for_the_rejected_trades_only_its_line(mm_project):
    project, source = mm_project
    decide(project, "2", item__external_id="short_002#3")
    decide(project, "tie", item__external_id="mcq_000#1")
    release, folder = release_of(project)
    lines = (folder / FILE).read_text().splitlines()
    originals = source.read_text().splitlines()
    assert originals[0] not in lines and len(lines) == len(originals) - 1
    kept = originals[1:]
    changed = [n for n, (a, b) in enumerate(zip(lines, kept, strict=True)) if a != b]
    assert len(changed) == 1
    new, old = json.loads(lines[changed[0]]), json.loads(kept[changed[0]])
    assert (new["chosen"], new["rejected"]) == (old["rejected"], old["chosen"])
    assert (new["chosen_reason"], new["rejected_reason"]) == (
        old["rejected_reason"],
        old["chosen_reason"],
    )
    assert list(new) == list(old)
    # mcq_000's remaining pair is now its first line: the scorer's pair
    # "mcq_000#1" is the item imported as mcq_000#2.
    evaluation = score(release, [{"id": json.loads(x)["id"], "rewards": [0, 1]} for x in lines])
    row = ItemPrediction.objects.get(evaluation=evaluation, item__external_id="mcq_000#2")
    assert (row.external_id, row.correct) == ("mcq_000#1", False)
    swapped = ItemPrediction.objects.get(evaluation=evaluation, item__external_id="short_002#3")
    assert (swapped.chosen, swapped.choice) == ("2", "1")
    assert json.loads((folder / "manifest.json").read_text())["mmrlhf"]["swapped_from_import"] == 1


def test_a_rekeyed_release_hides_the_ids_and_still_scores(mm_project):
    project, source = mm_project
    release, folder = release_of(project, rekey=True)
    values = [json.loads(x) for x in (folder / FILE).read_text().splitlines()]
    ids = [v["id"] for v in values]
    assert all(str(i).startswith("mm_") for i in ids) and ids == sorted(ids)
    evaluation = score(release, [{"id": i, "rewards": [1, 0]} for i in ids])
    assert evaluation.report["mmrlhf"]["acc_plus"] == 1.0
    assert ItemPrediction.objects.filter(evaluation=evaluation, correct=True).count() == len(ids)
    assert "mcq_000" in source.read_text() and "mcq_000" not in (folder / FILE).read_text()


def score(release, lines):
    body = "".join(json.dumps(x) + "\n" for x in lines).encode()
    scored = registry.get("mmrlhf").score(release, Upload(body, "p.jsonl"))
    evaluation = Evaluation.objects.create(
        release=release, name=f"e{Evaluation.objects.count()}", scoring="mmrlhf",
        report=scored.report, accuracy=scored.accuracy or 0.0,
    )  # fmt: skip
    scored.store_items(evaluation)
    return evaluation


def test_a_judge_run_asks_both_orders_with_the_pairs_media(mm_project):
    from types import SimpleNamespace

    project, _ = mm_project
    release, folder = release_of(project)
    benchmark = registry.get("mmrlhf")
    assert benchmark.judge_both_orders
    records = benchmark.judge_records(release)
    assert benchmark.judge_item_count(release) == len(records) == len(mmrlhf_sets.rows())
    video = next(r for r in records if r["ID"] == "video_007#1")
    assert video["images"] == [f"mmrlhf/video/clip_007/{f}" for f in mmrlhf_sets.VIDEO_FRAMES]
    endpoint = SimpleNamespace(model="m", max_tokens=32, temperature=None)
    read = []

    def read_image(name):
        read.append(name)
        return (folder / name).read_bytes()

    body = benchmark.judge_request(video, read_image, endpoint, swapped=True)
    assert read == video["images"] and len(body["messages"][0]["content"]) == 4
    assert "Assistant A's Answer]\nClip answer 2." in body["messages"][0]["content"][0]["text"]
    # Every pair right in both orders but the first, split (a tie: wrong).
    outputs = {}
    for r in records:
        outputs[(r["ID"], "original")] = "[[A]]"
        outputs[(r["ID"], "swapped")] = "[[A]]" if r is records[0] else "[[B]]"
    upload = benchmark.judge_predictions(outputs, records, SimpleNamespace(pk=7))
    report = benchmark.score(release, upload).report["mmrlhf"]
    assert report["correct"] == len(records) - 1
    assert report["groups_correct"] == report["groups"] - 1
