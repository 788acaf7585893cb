"""Per-item results of every evaluation, in canonical terms, and the
leaderboard drill-down pages."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from scipy.special import expit

from annotate.models import Item
from curation.models import Evaluation, ItemPrediction
from tests.curation.evaluation.test_evaluations import judge_lines, records_of, upload
from tests.curation.releases.test_releases import built, make_release_project
from tests.factories import make_member, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def release(tmp_path):
    return built(make_release_project(tmp_path, slug="drill"))


def canonical_of_slot(record, item, slot):
    """The canonical side whose text the release wrote in `slot`."""
    text = record[slot]
    assert text in (item.response_1, item.response_2)
    return "1" if text == item.response_1 else "2"


def test_every_uploaded_line_is_stored_per_item_in_canonical_terms(client, release):
    client.force_login(make_member(release.project, role="curator"))
    records = records_of(release)
    wrong = {records[0]["ID"], records[3]["ID"]}
    assert upload(client, release, "judge-x", judge_lines(records, wrong)).status_code == 302
    evaluation = Evaluation.objects.get(name="judge-x")
    rows = {p.external_id: p for p in ItemPrediction.objects.filter(evaluation=evaluation)}
    assert set(rows) == {r["ID"] for r in records}
    items = {i.external_id: i for i in Item.objects.filter(project=release.project)}
    for r in records:
        row, item = rows[r["ID"]], items[r["ID"]]
        assert row.item_id == item.pk
        picked_slot = "Output1" if ("[[A]]" in row.raw["original"]["output"]) else "Output2"
        # Checked against the response texts, independently of the mapping code.
        assert row.choice == canonical_of_slot(r, item, picked_slot)
        assert row.chosen == canonical_of_slot(r, item, r["Better"])
        assert row.correct is (r["ID"] not in wrong)
        assert row.p1 == 0.75 if row.choice == "1" else row.p1 == 0.25
    assert set(ItemPrediction.objects.wrong().values_list("external_id", flat=True)) == wrong
    # The stored rows agree with the official table.
    assert (
        sum(p.correct for p in rows.values())
        == evaluation.report["official"]["groups"][0]["correct"]
    )


def test_reward_scores_and_both_orders_are_stored_with_their_probability(client, release):
    client.force_login(make_member(release.project, role="curator"))
    records = records_of(release)
    items = {i.external_id: i for i in Item.objects.filter(project=release.project)}
    original, swapped = [], []
    for n, r in enumerate(records):
        original.append(json.dumps({"ID": r["ID"], "score_1": n * 0.1, "score_2": 0.3}))
        swapped.append(json.dumps({"ID": r["ID"], "output": "[[B]]"}))
    upload(client, release, "rm", "\n".join(original).encode(), "\n".join(swapped).encode())
    rows = {p.external_id: p for p in ItemPrediction.objects.filter(evaluation__name="rm")}
    for n, r in enumerate(records):
        item, row = items[r["ID"]], rows[r["ID"]]
        first = canonical_of_slot(r, item, "Output1")
        diff = n * 0.1 - 0.3
        assert row.p1 == pytest.approx(float(expit(diff if first == "1" else -diff)), abs=1e-12)
        assert row.raw["original"] == {"kind": "scores", "score_1": n * 0.1, "score_2": 0.3}
        assert row.has_swapped
        # Swapped order: B is the second shown, Output1.
        assert row.swapped_choice == first


def test_a_judge_runs_per_item_results_are_stored_too(release):
    from curation.evaluation.service import evaluate_upload

    records = records_of(release)
    evaluation = evaluate_upload(
        release=release,
        name="no-verdicts",
        predictions="\n".join(
            json.dumps({"ID": r["ID"], "output": "hm"}) for r in records
        ).encode(),
        filename="p.jsonl",
    )
    rows = list(evaluation.item_predictions.all())
    assert len(rows) == len(records)
    assert all(p.random_verdict and p.p1 is None and p.choice in ("1", "2") for p in rows)
    assert sum(p.correct for p in rows) == evaluation.report["official"]["groups"][0]["correct"]


def test_drill_down_lists_the_wrong_items_filtered_by_category(client, release):
    client.force_login(make_member(release.project, role="curator"))
    records = records_of(release)
    wrong = {r["ID"] for r in records[:6]}
    upload(client, release, "weak", judge_lines(records, wrong))
    evaluation = Evaluation.objects.get(name="weak")
    url = reverse("entry_items", args=[release.project.slug, release.pk, evaluation.pk])
    page = client.get(url)
    assert page.status_code == 200
    listed = {p.external_id for p in page.context["page"].object_list}
    assert listed == wrong
    category = records[0]["Category"]
    page = client.get(url, {"category": category})
    expected = {r["ID"] for r in records[:6] if r["Category"] == category}
    assert {p.external_id for p in page.context["page"].object_list} == expected
    assert category in page.context["categories"]
    everything = client.get(url, {"show": "all"})
    assert everything.context["page"].paginator.count == len(records)
    first = Item.objects.get(project=release.project, external_id=records[0]["ID"])
    assert reverse("item_models", args=[release.project.slug, first.pk]).encode() in page.content


def test_drill_down_runs_constant_queries(client, release):
    client.force_login(make_member(release.project, role="curator"))
    records = records_of(release)
    upload(client, release, "few", judge_lines(records, {records[0]["ID"]}))
    upload(client, release, "many", judge_lines(records, {r["ID"] for r in records}))
    counts = []
    for name in ("few", "many"):
        e = Evaluation.objects.get(name=name)
        url = reverse("entry_items", args=[release.project.slug, release.pk, e.pk])
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(url).status_code == 200
        counts.append(len(ctx))
    assert counts[0] == counts[1]


def test_per_item_page_shows_how_every_entry_judged_it(client, release):
    client.force_login(make_member(release.project, role="curator"))
    records = records_of(release)
    target = records[2]["ID"]
    upload(client, release, "judge-a", judge_lines(records, {target}))
    upload(client, release, "judge-b", judge_lines(records))
    item = Item.objects.get(project=release.project, external_id=target)
    page = client.get(reverse("item_models", args=[release.project.slug, item.pk]))
    rows = page.context["rows"]
    assert {(r.evaluation.name, r.correct) for r in rows} == {
        ("judge-a", False),
        ("judge-b", True),
    }
    assert b"[[" in page.content  # the judge's raw text is there to read


@pytest.mark.parametrize(
    ("role", "status"), [("annotator", 403), ("curator", 200), ("admin", 200), (None, 404)]
)
def test_drill_down_permissions(client, release, role, status):
    records = records_of(release)
    curator = make_member(release.project, role="curator")
    client.force_login(curator)
    upload(client, release, "x", judge_lines(records))
    evaluation = Evaluation.objects.get(name="x")
    item = Item.objects.get(project=release.project, external_id=records[0]["ID"])
    user = make_member(release.project, role=role) if role else make_user()
    client.force_login(user)
    slug = release.project.slug
    assert (
        client.get(reverse("entry_items", args=[slug, release.pk, evaluation.pk])).status_code
        == status
    )
    assert client.get(reverse("item_models", args=[slug, item.pk])).status_code == status


def test_a_rekeyed_release_scores_predictions_by_its_new_ids(client, tmp_path):
    """Judges see only the release's (re-keyed) IDs; their lines map back to
    the items through ReleaseItem.released_id."""
    project = make_release_project(tmp_path, slug="rekeyed")
    release = built(project, rekey=True)
    client.force_login(make_member(project, role="curator"))
    records = records_of(release)
    olds = set(Item.objects.filter(project=project).values_list("external_id", flat=True))
    assert records and not olds & {r["ID"] for r in records}
    wrong = {records[0]["ID"]}
    assert upload(client, release, "judge-r", judge_lines(records, wrong)).status_code == 302
    evaluation = Evaluation.objects.get(name="judge-r")
    rows = list(ItemPrediction.objects.filter(evaluation=evaluation))
    assert len(rows) == len(records)
    new_to_item = dict(release.release_items.values_list("released_id", "item_id"))
    assert all(new_to_item[row.external_id] == row.item_id for row in rows)
    assert {row.external_id for row in rows if not row.correct} == wrong
