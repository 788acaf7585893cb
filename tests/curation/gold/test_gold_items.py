"""Check and qualification items a curator makes from settled items (issue
36 follow-up, curation.gold): a copy with the same parts and the verdict's
side as gold, the source untouched; the refusals; retiring and editing the
explanation, audited; who is never served a copy; the grid's bulk action,
the adjudication page's form and the API with the same validation."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.test import APIClient

from annotate import checks
from annotate.gates import check_accuracy
from annotate.loop.service import Vote, claim_next_item, submit_judgement
from annotate.models import Assignment, Item, ItemPart, ItemPurpose
from annotate.qualification.service import qualification_items, start_attempt
from curation.gold.service import (
    EXPLANATION_MAX,
    GoldRefused,
    edit_explanation,
    make_gold_item,
    retire_gold_item,
)
from curation.grid.bulk import apply_bulk
from curation.models import AuditEvent, Verdict
from tests.factories import make_assignment, make_item, make_judgement, make_member, make_project

pytestmark = pytest.mark.django_db


def settled(project, *, status="agreed", side="2", voters=(), **kwargs):
    """A benchmark item whose verdict is `status` with `side`, voted by `voters`."""
    item = make_item(project, model_1="model-a", model_2="model-b", **kwargs)
    final = side if status in ("agreed", "resolved") else ""
    Verdict.objects.create(
        item=item,
        project=project,
        status=status,
        final_choice=final,
        provenance="majority" if final else "",
        exclusion_category="other" if status == "excluded" else "",
    )
    for user in voters:
        make_judgement(make_assignment(item, user), side or "1")
    return item


def make(project, item, curator, purpose="check", **kwargs):
    kwargs.setdefault("reason", "a clear case")
    return make_gold_item(
        project=project, item_id=item.pk, curator=curator, purpose=purpose, **kwargs
    )


def state(item):
    """What must not move on the source: row, verdict, votes, parts."""
    item.refresh_from_db()
    v = Verdict.objects.get(item=item)
    return (
        item.purpose,
        item.gold_choice,
        item.votes_needed,
        item.votes_1,
        item.votes_2,
        (v.status, v.final_choice, v.version),
        list(item.assignments.values_list("pk", flat=True)),
        list(ItemPart.objects.filter(item=item).values_list("slot", "position", "text", "image")),
    )


def test_a_check_is_a_copy_with_the_verdicts_side_as_gold_and_the_source_untouched():
    project = make_project()
    curator = make_member(project, role="curator")
    source = settled(project, side="2", voters=[make_member(project) for _ in range(3)])
    before = state(source)
    copy = make(project, source, curator, explanation="**Two** cites the chart.", is_attention=True)
    assert state(source) == before
    copy.refresh_from_db()
    assert (copy.purpose, copy.gold_choice, copy.votes_needed, copy.copied_from_id) == (
        ItemPurpose.CHECK,
        "2",
        0,
        source.pk,
    )
    assert copy.is_attention and copy.explanation == "**Two** cites the chart."
    assert (copy.prompt, copy.response_1, copy.response_2, copy.image_id, copy.domain_id) == (
        source.prompt,
        source.response_1,
        source.response_2,
        source.image_id,
        source.domain_id,
    )
    parts = ("slot", "position", "kind", "text", "image", "media")
    assert list(ItemPart.objects.filter(item=copy).values_list(*parts)) == list(
        ItemPart.objects.filter(item=source).values_list(*parts)
    )
    assert not Verdict.objects.filter(item=copy).exists()  # no curation page sees it
    event = AuditEvent.objects.get(project=project, action="make_check")
    assert (event.item_id, event.actor_id, event.reason) == (source.pk, curator.pk, "a clear case")
    assert event.before == {"status": "agreed", "final_choice": "2"}
    assert event.after["item"] == copy.pk and event.after["gold"] == "2"


@pytest.mark.parametrize(
    ("status", "side", "message"),
    [
        ("needs_votes", "", "not settled"),
        ("contested", "", "not settled"),
        ("excluded", "", "not settled"),
        ("resolved", "tie", "tie"),
    ],
)
def test_an_unsettled_or_tied_item_is_refused_and_nothing_is_made(status, side, message):
    project = make_project(allow_tie=True)
    curator = make_member(project, role="curator")
    item = settled(project, status=status, side=side)
    if side == "tie":
        Verdict.objects.filter(item=item).update(final_choice="tie")
    with pytest.raises(GoldRefused, match=message):
        make(project, item, curator)
    assert Item.objects.count() == 1 and not AuditEvent.objects.exists()


def test_one_live_copy_per_item_and_another_after_retiring_it():
    project = make_project()
    curator = make_member(project, role="curator")
    source = settled(project)
    first = make(project, source, curator)
    with pytest.raises(GoldRefused, match="already has a live gold check item"):
        make(project, source, curator, purpose="qualification")
    retire_gold_item(project=project, item_id=first.pk, curator=curator, reason="too easy")
    second = make(project, source, curator, purpose="qualification")
    assert second.external_id != first.external_id
    assert second.purpose == ItemPurpose.QUALIFICATION


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"purpose": "benchmark"}, "check or a qualification"),
        ({"reason": "  "}, "reason"),
        ({"explanation": "x" * (EXPLANATION_MAX + 1)}, "at most"),
    ],
)
def test_bad_requests_are_refused_before_anything_changes(kwargs, message):
    project = make_project()
    curator = make_member(project, role="curator")
    source = settled(project)
    with pytest.raises(GoldRefused, match=message):
        make(project, source, curator, **kwargs)
    assert not Item.objects.exclude(pk=source.pk).exists()


def test_a_copy_of_a_copy_or_of_another_projects_item_is_not_found():
    project, other = make_project(), make_project()
    curator = make_member(project, role="curator")
    copy = make(project, settled(project), curator)
    for item in (copy, settled(other)):
        with pytest.raises(Verdict.DoesNotExist):
            make(project, item, curator)


def test_n_response_projects_are_refused_with_a_clear_message():
    project = make_project(task="ranking")
    curator = make_member(project, role="curator")
    source = settled(project)
    with pytest.raises(GoldRefused, match=r"pairwise only.*ranking"):
        make(project, source, curator)


def vote(choice="1"):
    return Vote(choice=choice, correct_1="yes", correct_2="no", confidence=2)


def test_who_voted_on_the_source_never_gets_its_check_and_others_do():
    project = make_project(check_rate=1.0, check_minimum=99)
    curator = make_member(project, role="curator")
    voter, newcomer = make_member(project), make_member(project)
    source = settled(project, voters=[voter])
    make_item(project)  # a benchmark item for the voter to get instead
    copy = make(project, source, curator)
    assert claim_next_item(project=project, annotator=newcomer).item_id == copy.pk
    got = claim_next_item(project=project, annotator=voter)
    assert got is None or got.item_id != copy.pk


def test_who_had_a_retired_copy_does_not_get_the_next_copy_of_the_same_item():
    project = make_project(check_rate=1.0, check_minimum=99)
    curator = make_member(project, role="curator")
    annotator, fresh = make_member(project), make_member(project)
    source = settled(project)
    Item.objects.filter(pk=source.pk).update(votes_needed=0)  # its votes are in
    first = make(project, source, curator)
    assert claim_next_item(project=project, annotator=annotator).item_id == first.pk
    retire_gold_item(project=project, item_id=first.pk, curator=curator, reason="reword")
    second = make(project, source, curator)
    Assignment.objects.filter(annotator=annotator).update(status="expired")
    assert claim_next_item(project=project, annotator=annotator) is None
    assert claim_next_item(project=project, annotator=fresh).item_id == second.pk


def test_a_retired_check_is_not_served_and_its_answers_stop_counting():
    project = make_project(check_rate=1.0, check_minimum=99)
    curator = make_member(project, role="curator")
    annotator = make_member(project)
    copy = make(project, settled(project, side="1"), curator)
    a = claim_next_item(project=project, annotator=annotator)
    assert a.item_id == copy.pk
    submit_judgement(assignment_id=a.pk, annotator=annotator, vote=vote("2"))
    assert check_accuracy(project, annotator).total == 1
    retire_gold_item(project=project, item_id=copy.pk, curator=curator, reason="gold disputed")
    assert check_accuracy(project, annotator).total == 0
    assert checks.check_rows(project) == {}
    other = make_member(project)
    got = claim_next_item(project=project, annotator=other)
    assert got.item_id == copy.copied_from_id  # the benchmark item, not the retired check
    event = AuditEvent.objects.get(action="retire_gold")
    assert (event.item_id, event.before["retired"], event.after["retired"]) == (
        copy.pk,
        False,
        True,
    )
    with pytest.raises(GoldRefused, match="already retired"):
        retire_gold_item(project=project, item_id=copy.pk, curator=curator, reason="again")


def test_qualification_copies_leave_out_retired_ones_and_items_the_annotator_voted_on():
    project = make_project(qualification_required=True)
    curator = make_member(project, role="curator")
    voter, newcomer = make_member(project), make_member(project)
    mine = settled(project, voters=[voter])
    fresh, gone = settled(project), settled(project)
    copies = [make(project, i, curator, purpose="qualification") for i in (mine, fresh, gone)]
    retire_gold_item(project=project, item_id=copies[2].pk, curator=curator, reason="old")
    assert set(qualification_items(project, newcomer)) == set(copies[:2])
    assert start_attempt(project=project, annotator=voter).item_ids == [copies[1].pk]


def test_editing_the_explanation_is_audited_and_benchmark_items_are_not_gates():
    project = make_project()
    curator = make_member(project, role="curator")
    source = settled(project)
    copy = make(project, source, curator, explanation="old")
    edit_explanation(
        project=project, item_id=copy.pk, curator=curator, explanation=" *new* ", reason=""
    )
    copy.refresh_from_db()
    assert copy.explanation == "*new*"
    event = AuditEvent.objects.get(action="edit_explanation")
    assert (event.before["explanation"], event.after["explanation"]) == ("old", "*new*")
    with pytest.raises(GoldRefused, match="unchanged"):
        edit_explanation(project=project, item_id=copy.pk, curator=curator, explanation="*new*")
    with pytest.raises(Item.DoesNotExist):
        edit_explanation(project=project, item_id=source.pk, curator=curator, explanation="x")


def test_the_bulk_action_makes_each_settled_item_and_counts_the_others():
    project = make_project()
    curator = make_member(project, role="curator")
    good = [settled(project, side=s) for s in ("1", "2")]
    waiting = settled(project, status="needs_votes", side="")
    outcome = apply_bulk(
        project=project,
        curator=curator,
        action="make_qualification",
        item_ids=[g.pk for g in good] + [waiting.pk],
        reason="training set",
        explanation="See the chart.",
    )
    assert outcome.done == 2 and sum(outcome.skipped.values()) == 1
    assert "2 items made qualification items." in outcome.summary()
    made = Item.objects.filter(purpose=ItemPurpose.QUALIFICATION).order_by("copied_from_id")
    assert [(m.copied_from_id, m.gold_choice, m.explanation) for m in made] == [
        (good[0].pk, "1", "See the chart."),
        (good[1].pk, "2", "See the chart."),
    ]
    assert AuditEvent.objects.filter(action="make_qualification").count() == 2


def test_the_grid_form_makes_checks_and_shows_the_outcome(client):
    project = make_project()
    curator = make_member(project, role="curator")
    items = [settled(project) for _ in range(2)]
    client.force_login(curator)
    response = client.post(
        reverse("item_grid_bulk", args=[project.slug]),
        {
            "action": "make_check",
            "item": [i.pk for i in items],
            "reason": "obvious",
            "is_attention": "on",
        },
        follow=True,
    )
    assert "2 items made check items." in response.content.decode()
    assert Item.objects.filter(purpose="check", is_attention=True).count() == 2


def test_the_adjudication_page_offers_the_form_and_makes_the_item(client):
    project = make_project()
    curator = make_member(project, role="curator")
    source = settled(project)
    client.force_login(curator)
    page = client.get(reverse("adjudicate", args=[project.slug, source.pk])).content.decode()
    assert 'id="gold-form"' in page
    response = client.post(
        reverse("make_gold", args=[project.slug, source.pk]),
        {"gold-purpose": "qualification", "gold-explanation": "Why", "gold-reason": "ok"},
        follow=True,
    )
    text = response.content.decode()
    assert "Made qualification item" in text and 'id="gold-form"' not in text
    assert Item.objects.get(copied_from=source).purpose == ItemPurpose.QUALIFICATION
    waiting = settled(project, status="contested", side="")
    page = client.get(reverse("adjudicate", args=[project.slug, waiting.pk])).content.decode()
    assert 'id="gold-form"' not in page and "not settled" in page


def test_the_list_page_retires_and_edits_in_constant_queries(client):
    project = make_project()
    curator = make_member(project, role="curator")
    client.force_login(curator)
    url = reverse("gold_items", args=[project.slug])
    counts = []
    for n in (2, 8):
        while Item.objects.filter(project=project, copied_from__isnull=False).count() < n:
            make(project, settled(project), curator)
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(url).status_code == 200
        counts.append(len(ctx))
    assert counts[0] == counts[1]
    copy = Item.objects.filter(copied_from__isnull=False).first()
    client.post(
        reverse("gold_explanation", args=[project.slug, copy.pk]), {f"g{copy.pk}-explanation": "E"}
    )
    client.post(reverse("gold_retire", args=[project.slug, copy.pk]), {f"g{copy.pk}-reason": "R"})
    copy.refresh_from_db()
    assert copy.explanation == "E" and copy.retired_at is not None
    # Its source's verdict moved: the list says so.
    Verdict.objects.filter(item_id=copy.copied_from_id).update(
        status="contested", final_choice="", provenance=""
    )
    assert "no longer says" in client.get(url).content.decode()


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_the_api_makes_lists_edits_and_retires_with_the_forms_rules():
    project = make_project()
    curator = make_member(project, role="curator")
    source = settled(project, side="1")
    base = f"/api/v1/projects/{project.slug}/gold-items/"
    c = api(curator)
    bad = c.post(base, {"item_id": source.pk, "purpose": "gold", "reason": ""}, format="json")
    assert bad.status_code == 400
    assert set(bad.json()["error"]["fields"]) == {"purpose", "reason"}
    made = c.post(
        base,
        {"item_id": source.pk, "purpose": "check", "reason": "r", "explanation": "E"},
        format="json",
    )
    assert made.status_code == 201, made.content
    body = made.json()
    assert (body["purpose"], body["gold_choice"], body["copied_from"], body["drifted"]) == (
        "check",
        "1",
        source.pk,
        False,
    )
    again = c.post(base, {"item_id": source.pk, "purpose": "check", "reason": "r"}, format="json")
    assert again.status_code == 409 and "retire that first" in again.json()["error"]["message"]
    missing = c.post(base, {"item_id": 999999, "purpose": "check", "reason": "r"}, format="json")
    assert missing.status_code == 404
    listed = c.get(base).json()
    assert [r["item_id"] for r in listed["results"]] == [body["item_id"]]
    edited = c.patch(f"{base}{body['item_id']}/", {"explanation": "F"}, format="json")
    assert edited.status_code == 200 and edited.json()["explanation"] == "F"
    gone = c.post(f"{base}{body['item_id']}/retire/", {"reason": "r"}, format="json")
    assert gone.status_code == 200 and gone.json()["retired_at"]
    assert c.post(f"{base}{source.pk}/retire/", {"reason": "r"}, format="json").status_code == 404
    annotator = make_member(project)
    assert api(annotator).get(base).status_code == 403


def test_the_bulk_api_takes_explanation_and_attention():
    project = make_project()
    curator = make_member(project, role="curator")
    items = [settled(project) for _ in range(2)]
    response = api(curator).post(
        f"/api/v1/projects/{project.slug}/items/bulk/",
        {
            "action": "make_check",
            "item_ids": [i.pk for i in items],
            "reason": "r",
            "explanation": "E",
            "is_attention": True,
        },
        format="json",
    )
    assert response.status_code == 200 and response.json()["done"] == 2
    assert Item.objects.filter(purpose="check", is_attention=True, explanation="E").count() == 2
    ranked = make_project(task="ranking")
    curator2 = make_member(ranked, role="curator")
    refused = api(curator2).post(
        f"/api/v1/projects/{ranked.slug}/items/bulk/",
        {"action": "make_check", "item_ids": [1], "reason": "r"},
        format="json",
    )
    assert refused.status_code == 400 and "pairwise only" in refused.json()["error"]["message"]


def test_a_made_check_looks_like_a_benchmark_item_to_the_annotator(client):
    """As tests/annotate/gates/test_checks_pages.py holds for imported checks:
    the same API body (but ids) and the same page (digits aside)."""
    from tests.annotate.gates.test_checks_pages import _normalised, shape

    bodies, pages = {}, {}
    for rate in (1.0, 0.0):
        project = make_project(check_rate=rate, check_minimum=99)
        curator = make_member(project, role="curator")
        content = {
            "image": None,
            "prompt": "Which shape is red?",
            "response_1": "Square.",
            "response_2": "Circle.",
        }
        source = settled(project, **content)
        Item.objects.filter(pk=source.pk).update(votes_needed=0)  # its votes are in
        make(project, source, curator, explanation="secret-explanation")
        make_item(project, **content)
        user = make_member(project)
        body = api(user).post(reverse("api_next_assignment", args=[project.slug])).json()
        a = Assignment.objects.get(pk=body["id"])
        bodies[a.item.purpose] = body
        client.force_login(user)
        Assignment.objects.filter(pk=a.pk).update(display_order="12")
        pages[a.item.purpose] = client.get(reverse("work_item", args=[a.pk])).content.decode()
    check, bench = bodies[ItemPurpose.CHECK], bodies[ItemPurpose.BENCHMARK]
    assert shape(check) == shape(bench)
    # The display order is drawn per lease: the sides' content is left aside.
    ignore = ("id", "project", "lease_expires_at", "left", "right", "content")
    assert {k: v for k, v in check.items() if k not in ignore} == {
        k: v for k, v in bench.items() if k not in ignore
    }
    assert _normalised(pages[ItemPurpose.CHECK]) == _normalised(pages[ItemPurpose.BENCHMARK])
    for text in (str(check), pages[ItemPurpose.CHECK]):
        assert "secret-explanation" not in text and "model-a" not in text
