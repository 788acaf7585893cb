"""The data grid (/p/<slug>/items/ and /api/v1/projects/<slug>/items/):
who sees it, every filter and sort on the page and in the API, constant
queries, bulk actions with one audit entry each and their refusals."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotate.models import Item, ItemPart, PartKind
from curation.grid.bulk import apply_bulk
from curation.grid.filters import grid_rows
from curation.models import AuditEvent, Verdict, VerdictStatus
from tests.curation.verdicts.test_decisions import contested_item
from tests.factories import (
    make_assignment,
    make_image,
    make_item,
    make_judgement,
    make_member,
    make_user,
)

pytestmark = pytest.mark.django_db


def world():
    """A project with items in several states: two contested, one agreed
    (unanimous, gold), one flagged, one waiting with no votes."""
    project, contested, _, voters = contested_item()
    project2, other, _, _ = contested_item(project=project, choices=("1", "2", "tie"))
    assert project2 is project
    vqa = project.domains.get(slug="vqa")
    agreed = make_item(project, domain=vqa, external_id="gold_needle", gold_choice="1")
    Verdict.objects.create(
        item=agreed, project=project, status="agreed", final_choice="1", provenance="unanimous"
    )
    for _ in range(3):
        make_judgement(make_assignment(agreed), "1")
    flagged = make_item(project, domain=vqa, external_id="flag_me", prompt="A broken picture")
    Verdict.objects.create(item=flagged, project=project)
    make_judgement(make_assignment(flagged), "2", flagged_problem=True, problem_reason="blank")
    waiting = make_item(project, domain=vqa, external_id="waiting", image=None)
    ItemPart.objects.create(
        item=waiting, slot="response_1", position=1, kind=PartKind.IMAGE, image=make_image()
    )
    Verdict.objects.create(item=waiting, project=project)
    return (
        project,
        {
            "contested": contested,
            "other": other,
            "agreed": agreed,
            "flagged": flagged,
            "waiting": waiting,
        },
        voters,
    )


def ids(rows):
    return {v.item.external_id for v in rows}


def test_every_filter_selects_exactly_its_items():
    project, it, _ = world()
    f = lambda **kw: ids(grid_rows(project, kw))  # noqa: E731
    every = {i.external_id for i in it.values()}
    assert f() == every
    assert f(status="contested") == {it["contested"].external_id, it["other"].external_id}
    assert f(domain="vqa") == {"gold_needle", "flag_me", "waiting"}
    assert f(kind="tie_majority") == {it["contested"].external_id}
    assert f(votes_min=3) == {it["contested"].external_id, it["other"].external_id, "gold_needle"}
    assert f(votes_max=0) == {"waiting"}
    assert f(agreement_min=1.0) == {"gold_needle", "flag_me"}
    assert f(agreement_max=0.5) == {it["other"].external_id, "waiting"}
    assert f(flagged="yes") == {"flag_me"}
    assert f(flagged="no") == every - {"flag_me"}
    assert f(gold="yes") == {"gold_needle"}
    assert f(q="needle") == {"gold_needle"}
    assert f(q="BROKEN pic") == {"flag_me"}
    assert f(status="needs_votes", domain="vqa", votes_max=1) == {"flag_me", "waiting"}


@pytest.mark.parametrize(
    "sort, first",
    [("id", "contested"), ("-id", "waiting"), ("-votes", "agreed"), ("votes", "waiting")],
)
def test_sorts(sort, first):
    project, it, _ = world()
    assert next(iter(grid_rows(project, {"sort": sort}))).item_id == it[first].pk


@pytest.mark.parametrize("role", ["anonymous", "outsider", "annotator", "curator", "admin"])
def test_only_curators_and_admins_see_the_grid_and_act(client, role):
    project, it, _ = world()
    if role == "outsider":
        client.force_login(make_user())
    elif role != "anonymous":
        client.force_login(make_member(project, role=role))
    page = client.get(reverse("item_grid", args=[project.slug]))
    bulk = client.post(
        reverse("item_grid_bulk", args=[project.slug]),
        {"action": "exclude", "category": "broken", "reason": "r", "item": [it["waiting"].pk]},
    )
    api = client.get(reverse("api_items", args=[project.slug]))
    expected = {"anonymous": 302, "outsider": 404, "annotator": 403}.get(role)
    if expected:
        assert page.status_code == expected and bulk.status_code == expected
        assert api.status_code in ({401, 403} if role == "anonymous" else {expected})
        assert Verdict.objects.get(item=it["waiting"]).status == "needs_votes"
    else:
        assert page.status_code == 200 and api.status_code == 200
        assert bulk.status_code == 302
        assert Verdict.objects.get(item=it["waiting"]).status == "excluded"


def test_page_shows_thumbnails_snippets_and_flags_in_constant_queries(
    client, django_assert_max_num_queries
):
    project, it, _ = world()
    client.force_login(make_member(project, role="curator"))
    url = reverse("item_grid", args=[project.slug])
    with django_assert_max_num_queries(12) as few:
        html = client.get(url).content.decode()
    assert "A broken picture" in html and "problem" in html and "gold" in html
    assert it["waiting"].content_parts.get(kind="image").image.file in html  # a response picture
    assert it["agreed"].image.file in html
    vqa = project.domains.get(slug="vqa")
    for n in range(30):
        item = make_item(project, domain=vqa, external_id=f"more_{n}")
        Verdict.objects.create(item=item, project=project)
        make_judgement(make_assignment(item), "1", flagged_problem=n % 2 == 0)
    with django_assert_max_num_queries(len(few.captured_queries)):
        client.get(url)


def test_invalid_filters_are_errors_beside_their_field_and_a_400_in_the_api(client):
    project, _, _ = world()
    client.force_login(make_member(project, role="curator"))
    page = client.get(reverse("item_grid", args=[project.slug]), {"votes_min": "many"})
    assert page.status_code == 400
    assert "Enter a whole number" in page.content.decode()
    api = client.get(
        reverse("api_items", args=[project.slug]), {"agreement_min": 0.9, "agreement_max": 0.1}
    )
    assert api.status_code == 400
    assert "agreement_max" in api.json()["error"]["fields"]


def test_api_lists_with_the_same_filters_and_pages(client):
    project, _it, _ = world()
    client.force_login(make_member(project, role="curator"))
    url = reverse("api_items", args=[project.slug])
    body = client.get(url, {"domain": "vqa", "sort": "external_id", "page_size": 2}).json()
    assert body["count"] == 3
    assert [r["external_id"] for r in body["results"]] == ["flag_me", "gold_needle"]
    row = body["results"][0]
    assert row["flagged_problem"] is True and row["has_gold"] is False
    assert row["thumbnail"].startswith("http://testserver/media/")
    assert client.get(body["next"]).json()["results"][0]["external_id"] == "waiting"
    # No model names or gold choice in a row (curators see them on the item).
    assert "model_1" not in row and "gold_choice" not in row


def test_bulk_exclude_audits_each_item_and_skips_what_the_rules_refuse():
    project, it, voters = world()
    voter_curator = voters[0]
    project.memberships.filter(user=voter_curator).update(role="curator")
    targets = [it["contested"].pk, it["flagged"].pk, 999_999]
    outcome = apply_bulk(
        project=project,
        curator=voter_curator,
        action="exclude",
        item_ids=targets,
        reason="broken pictures",
        category="broken",
    )
    # The curator voted on `contested`: refused for them; 999999 is unknown.
    assert outcome.done == 1
    assert sum(outcome.skipped.values()) == 2
    assert Verdict.objects.get(item=it["flagged"]).status == VerdictStatus.EXCLUDED
    assert Verdict.objects.get(item=it["contested"]).status == VerdictStatus.CONTESTED
    events = AuditEvent.objects.filter(action="exclude")
    assert [(e.item_id, e.reason) for e in events] == [(it["flagged"].pk, "broken pictures")]


def test_bulk_reopen_more_votes_and_move_domain(client):
    project, it, _ = world()
    curator = make_member(project, role="curator")
    client.force_login(curator)
    url = reverse("item_grid_bulk", args=[project.slug])
    back = reverse("item_grid", args=[project.slug]) + "?domain=vqa"
    r = client.post(
        url, {"action": "reopen", "reason": "check again", "item": [it["agreed"].pk], "back": back}
    )
    assert r.status_code == 302 and r["Location"] == back
    assert Verdict.objects.get(item=it["agreed"]).status == VerdictStatus.CONTESTED
    needed = Item.objects.get(pk=it["flagged"].pk).votes_needed
    client.post(url, {"action": "more_votes", "n": 2, "reason": "thin", "item": [it["flagged"].pk]})
    assert Item.objects.get(pk=it["flagged"].pk).votes_needed == needed + 2
    client.post(
        url,
        {
            "action": "move_domain",
            "domain": "reasoning",
            "reason": "it is maths",
            "item": [it["flagged"].pk, it["waiting"].pk],
        },
    )
    assert set(
        Item.objects.filter(domain__slug="reasoning").values_list("external_id", flat=True)
    ) == {"flag_me", "waiting"}
    moves = AuditEvent.objects.filter(action="move_domain").order_by("item_id")
    assert [(m.before, m.after, m.actor_id) for m in moves] == [
        ({"domain": "vqa"}, {"domain": "reasoning"}, curator.pk)
    ] * 2
    assert AuditEvent.objects.filter(action__in=["reopen", "more_votes"]).count() == 2


def test_bulk_on_every_matching_item_uses_the_pages_filter(client):
    project, _it, _ = world()
    client.force_login(make_member(project, role="admin"))
    back = reverse("item_grid", args=[project.slug]) + "?domain=vqa&status=needs_votes"
    r = client.post(
        reverse("item_grid_bulk", args=[project.slug]),
        {
            "action": "exclude",
            "category": "ambiguous",
            "reason": "r",
            "items": "matching",
            "back": back,
        },
        follow=True,
    )
    assert "2 items excluded." in r.content.decode()
    assert set(
        Verdict.objects.filter(status="excluded").values_list("item__external_id", flat=True)
    ) == {"flag_me", "waiting"}


def test_bulk_request_errors_change_nothing(client):
    project, it, _ = world()
    client.force_login(make_member(project, role="curator"))
    url = reverse("item_grid_bulk", args=[project.slug])
    before = AuditEvent.objects.count()
    for data in (
        {"action": "exclude", "reason": "r", "item": [it["waiting"].pk]},  # no category
        {"action": "exclude", "category": "broken", "item": [it["waiting"].pk]},  # no reason
        {"action": "more_votes", "n": 50, "reason": "r", "item": [it["waiting"].pk]},
        {"action": "move_domain", "reason": "r", "item": [it["waiting"].pk]},  # no domain
        {"action": "exclude", "category": "broken", "reason": "r"},  # nothing selected
        {"action": "exclude", "category": "broken", "reason": "r", "item": ["x"]},
    ):
        r = client.post(url, data, follow=True)
        assert r.status_code == 200
        assert 'class="msg-error"' in r.content.decode(), data
    assert AuditEvent.objects.count() == before
    # An open redirect through `back` is not possible.
    r = client.post(url, {"action": "exclude", "back": "https://evil.example/"})
    assert r["Location"] == reverse("item_grid", args=[project.slug])


def test_api_bulk(client):
    project, it, _ = world()
    client.force_login(make_member(project, role="curator"))
    url = reverse("api_items_bulk", args=[project.slug])
    r = client.post(
        url,
        {
            "action": "move_domain",
            "domain": "safety",
            "reason": "r",
            "item_ids": [it["waiting"].pk],
        },
        content_type="application/json",
    )
    assert r.status_code == 200, r.content
    assert r.json()["done"] == 1
    assert Item.objects.get(pk=it["waiting"].pk).domain.slug == "safety"
    r = client.post(
        url,
        {"action": "move_domain", "domain": "nope", "reason": "r", "item_ids": [1]},
        content_type="application/json",
    )
    assert r.status_code == 400
