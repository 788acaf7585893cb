"""Ranked responses (MR²Bench's layout) end to end (issue 33): records
imported through the one writer into a ranking project (N slots, images),
decided with final rankings, released as `ranked/rankings.jsonl` (import ->
export byte for byte when nothing changed), scored through the evaluation
API and the evaluate command by top-1 and τ-b, shown on the leaderboard."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.urls import reverse
from PIL import Image
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.importing.records import ImportFailed
from annotate.importing.service import import_items_from_paths
from annotate.models import Item, ItemPart, Task
from curation.models import Evaluation, ReleaseItem, Verdict, VerdictRank
from curation.releases.build import build_release
from tests.curation.benchmarks.ranked.test_scoring import tau_b_by_pairs, top1_by_sets
from tests.curation.releases.test_releases import new_release
from tests.factories import make_member, make_project

pytestmark = pytest.mark.django_db


def ranked_records():
    return [
        {"id": "q1", "prompt": "Which is right? ✓", "image": "img/q1.png",
         "responses": ["a", "b", "c", "d"], "rankings": [2, 1, 3, 3],
         "category": "Math", "extra": {"kept": [1, None]}},
        {"id": "q2", "prompt": "Pick one", "responses": ["x", "y"], "rankings": [1, 1],
         "category": "Math"},
        {"id": "q3", "prompt": "Eight of them", "responses": [f"r{k}" for k in range(8)],
         "rankings": [1, 2, 2, 3, 4, 5, 6, 7], "category": "Chat"},
        {"id": "q4", "prompt": "Three", "responses": ["u", "v", "w"], "rankings": [3, 2, 1]},
    ]  # fmt: skip


def decide_as_imported(project):
    """Agreed verdicts whose final ranking is the imported one."""
    for item in Item.objects.filter(project=project):
        verdict = item.verdict
        ranks = item.meta["ranked"]["rankings"]
        competition = [1 + sum(o < r for o in ranks) for r in ranks]
        Verdict.objects.filter(pk=verdict.pk).update(
            status="agreed", final_choice=str(competition.index(1) + 1), provenance="majority"
        )
        VerdictRank.objects.bulk_create(
            VerdictRank(verdict=verdict, slot=k, rank=r) for k, r in enumerate(competition, 1)
        )


@pytest.fixture
def ranked_project(tmp_path):
    project = make_project(slug="mr2", task=Task.RANKING, seed=5)
    (tmp_path / "img").mkdir()
    Image.new("RGB", (16, 12), "blue").save(tmp_path / "img/q1.png")
    path = tmp_path / "mr2.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ranked_records()))
    result = import_items_from_paths(project=project, dataset=path)
    assert result.created == 4
    decide_as_imported(project)
    return project, path


def release_of(project, **kw):
    domains = list(
        project.domains.filter(slug__startswith="ranked-").values_list("slug", flat=True)
    )
    release = build_release(release_id=new_release(project, domains=domains, **kw).pk)
    assert release.status == "ready", release.error
    return release, Path(settings.MEDIA_ROOT) / release.folder


def test_imported_records_have_n_slots_and_their_images(ranked_project):
    project, _ = ranked_project
    q3 = Item.objects.get(project=project, external_id="q3")
    assert ItemPart.objects.filter(item=q3).exclude(slot="prompt").count() == 8
    assert q3.domain.export_category == "ranked/Chat"
    q1 = Item.objects.get(project=project, external_id="q1")
    kinds = list(ItemPart.objects.filter(item=q1, slot="prompt").values_list("kind", flat=True))
    assert kinds == ["image", "text"]
    assert Item.objects.get(project=project, external_id="q4").domain.slug == "ranked-default"


def test_bad_input_changes_nothing(ranked_project, tmp_path):
    project, _ = ranked_project
    bad = tmp_path / "bad.jsonl"
    rows = [
        {"id": "n1", "prompt": "p", "responses": ["a", "b"], "rankings": [1, 2]},
        {"id": "n2", "prompt": "p", "responses": ["a", "b", "c"], "rankings": [1, 2]},
    ]
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ImportFailed) as failed:
        import_items_from_paths(project=project, dataset=bad)
    problem = failed.value.problems[0]
    assert (problem.file, problem.line, problem.field) == ("bad.jsonl", 2, "rankings")
    assert Item.objects.filter(project=project).count() == 4


def test_release_is_byte_identical_and_scored_by_top1_and_tau_b(ranked_project, client, tmp_path):
    project, source = ranked_project
    release, folder = release_of(project)
    assert (folder / "ranked/rankings.jsonl").read_bytes() == source.read_bytes()
    assert (folder / "ranked/img/q1.png").read_bytes() == (
        source.parent / "img/q1.png"
    ).read_bytes()
    manifest = json.loads((folder / "manifest.json").read_text())
    section = manifest["ranked"]
    assert section["records"] == 4 and section["changed_from_import"] == 0
    assert section["categories"] == {"Math": 2, "Chat": 1, "default": 1}
    assert "ranked" in manifest["formats"] and "ranked/rankings.jsonl" in manifest["files"]
    card = (folder / "README.md").read_text()
    assert "4 prompts in `ranked/rankings.jsonl`, the generic ranked layout" in card
    assert "studio's definitions (MR²Bench publishes no scorer)" in card
    members = dict(ReleaseItem.objects.filter(release=release).values_list("external_id", "chosen"))
    assert members == {"q1": "2", "q2": "1", "q3": "1", "q4": "3"}
    assert set(ReleaseItem.objects.filter(release=release).values_list("better", flat=True)) == {
        "ranked"
    }
    # A second release of the same state: the same bytes.
    _again, folder2 = release_of(project, version="v2")
    assert (folder2 / "ranked/rankings.jsonl").read_bytes() == source.read_bytes()

    predictions = {
        "q1": {"scores": [0.9, 0.9, 0.1, -1.0]},  # ties the best with another at its top
        "q2": {"ranking": [2, 1]},
        "q3": {"scores": [8, 6, 7, 5, 4, 3, 2, 1]},
        "zz": {"scores": [1, 2]},  # unknown; q4 missing
    }
    body = "".join(json.dumps({"id": k, **v}) + "\n" for k, v in predictions.items())
    human = {r["id"]: [1 + sum(o < x for o in r["rankings"]) for x in r["rankings"]]
             for r in ranked_records()}  # fmt: skip
    per = {}
    for k, v in predictions.items():
        if k in human:
            scores = v.get("scores") or [-r for r in v["ranking"]]
            per[k] = (
                top1_by_sets(human[k], scores),
                tau_b_by_pairs(human[k], [-s for s in scores]),
            )
    expected_top1 = sum(t for t, _ in per.values()) / 4  # q4 missing counts 0
    taus = [t for _, t in per.values() if t is not None]
    curator = make_member(project, role="curator")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=curator).key}")
    url = f"/api/v1/projects/{project.slug}/releases/{release.pk}/evaluations/"
    r = api.post(
        url,
        {"name": "rm-1", "predictions": io.BytesIO(body.encode()), "predictions_format": "ranked"},
        format="multipart",
    )
    assert r.status_code == 201, r.content
    assert r.json()["scoring"] == "ranked"
    assert r.json()["accuracy"] == pytest.approx(expected_top1, abs=1e-9)
    report = Evaluation.objects.get(release=release, name="rm-1").report["ranked"]
    assert report["tau_b"] == pytest.approx(sum(taus) / len(taus), abs=1e-9)
    # q2's humans tied both responses: τ-b undefined, left out of the mean.
    assert (report["missing"], report["unknown_ids"], report["tau_prompts"]) == (1, 1, 2)
    assert len(taus) == 2
    by = {c["category"]: c for c in report["categories"]}
    assert by["Math"]["top1"] == pytest.approx((per["q1"][0] + per["q2"][0]) / 2, abs=1e-9)

    client.force_login(curator)
    page = client.get(reverse("leaderboard", args=[project.slug, release.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "ranked-leaderboard" in html and 'data-name="rm-1"' in html
    # Acc+ over the prompts' pairwise decompositions (no groups: each its own).
    assert report["acc_plus"]["groups"] == 4 and "data-acc-plus>" in html
    assert "studio&#x27;s definitions" in html or "studio's definitions" in html

    # The evaluate command: the same report from the release folder on disk.
    preds = tmp_path / "preds.jsonl"
    preds.write_text(body)
    out = io.StringIO()
    call_command("evaluate", str(folder), str(preds), "--format", "ranked", "--json", stdout=out)
    assert json.loads(out.getvalue())["ranked"] == report
    text = io.StringIO()
    call_command("evaluate", str(folder), str(preds), "--format", "ranked", stdout=text)
    assert "overall" in text.getvalue() and "studio's definitions" in text.getvalue()


def test_a_changed_ranking_changes_only_its_line(ranked_project):
    project, source = ranked_project
    verdict = Verdict.objects.get(project=project, item__external_id="q4")
    VerdictRank.objects.filter(verdict=verdict).delete()
    VerdictRank.objects.bulk_create(
        VerdictRank(verdict=verdict, slot=k, rank=r) for k, r in enumerate([1, 3, 1], 1)
    )
    Verdict.objects.filter(pk=verdict.pk).update(final_choice="1", provenance="adjudicated")
    _release, folder = release_of(project)
    lines = (folder / "ranked/rankings.jsonl").read_text().splitlines()
    originals = source.read_text().splitlines()
    changed = [n for n, (a, b) in enumerate(zip(lines, originals, strict=True)) if a != b]
    assert changed == [3]
    assert json.loads(lines[3])["rankings"] == [1, 3, 1]
    assert json.loads((folder / "manifest.json").read_text())["ranked"]["changed_from_import"] == 1


def test_a_pick_without_a_ranking_is_ranked_first_and_a_tie_is_left_out(ranked_project):
    project, _ = ranked_project
    VerdictRank.objects.filter(verdict__item__external_id__in=["q3", "q2"]).delete()
    Verdict.objects.filter(item__external_id="q3").update(final_choice="4")
    Verdict.objects.filter(item__external_id="q2").update(status="resolved", final_choice="tie")
    release, folder = release_of(project)
    records = {json.loads(x)["id"]: json.loads(x) for x in
               (folder / "ranked/rankings.jsonl").read_text().splitlines()}  # fmt: skip
    assert "q2" not in records  # a resolved tie: no best response, not a member
    assert not ReleaseItem.objects.filter(release=release, external_id="q2").exists()
    assert records["q3"]["rankings"] == [2, 2, 2, 1, 2, 2, 2, 2]
    assert json.loads((folder / "manifest.json").read_text())["ranked"]["from_pick"] == 1


def test_a_rekeyed_release_hides_the_ids(ranked_project):
    project, _ = ranked_project
    _release, folder = release_of(project, rekey=True)
    ids = [json.loads(x)["id"] for x in (folder / "ranked/rankings.jsonl").read_text().splitlines()]
    assert all(i.startswith("rk_") for i in ids) and ids == sorted(ids)
    assert "id_rekey" in json.loads((folder / "manifest.json").read_text())["ranked"]


def test_the_release_is_judged_by_the_ranked_benchmark(ranked_project):
    """The judge runner's default for a ranked release (its judge: test_ranked_judge)."""
    from curation.benchmarks import registry

    project, _ = ranked_project
    release, _ = release_of(project)
    assert registry.default_for(release).key == "ranked"
    records = registry.get("ranked").judge_records(release)
    assert registry.get("ranked").judge_item_count(release) == len(records) == 4
    assert records[0]["images"] == ["img/q1.png"] and records[0]["responses"] == list("abcd")


def test_a_member_of_the_pair_layouts_shape_is_one_member(ranked_project, tmp_path):
    """Two responses and one prompt image: a Multimodal RewardBench record
    too; one ReleaseItem (the record's), a line in both files."""
    project, _source = ranked_project
    extra = tmp_path / "pair.jsonl"
    extra.write_text(
        json.dumps(
            {
                "id": "p1",
                "prompt": "Two",
                "image": "img/q1.png",
                "responses": ["l", "r"],
                "rankings": [2, 1],
                "category": "Math",
            }
        )
        + "\n"
    )
    (tmp_path / "img").mkdir(exist_ok=True)
    Image.new("RGB", (16, 12), "blue").save(tmp_path / "img/q1.png")
    assert import_items_from_paths(project=project, dataset=extra).created == 1
    item = Item.objects.get(project=project, external_id="p1")
    Verdict.objects.filter(item=item).update(status="agreed", final_choice="2", provenance="gold")
    VerdictRank.objects.bulk_create(
        [
            VerdictRank(verdict=item.verdict, slot=1, rank=2),
            VerdictRank(verdict=item.verdict, slot=2, rank=1),
        ]
    )
    release, folder = release_of(project)
    lines = (folder / "ranked/rankings.jsonl").read_text().splitlines()
    assert lines[-1] == extra.read_text().strip()
    member = ReleaseItem.objects.get(release=release, external_id="p1")
    assert member.better in ("Output1", "Output2") and member.chosen == "2"
    assert ReleaseItem.objects.filter(release=release).count() == 5
    records = json.loads((folder / "all_data.json").read_text())
    assert [r["ID"] for r in records] == ["p1"]
