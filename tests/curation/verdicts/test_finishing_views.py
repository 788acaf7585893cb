"""The pages of issue 17: stuck items shown with why, curators closing any
item, the rule page's report, the annotator's truthful 'done' page."""

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from annotate.loop.service import Vote, claim_next_item, submit_judgement
from curation.models import Verdict
from tests.factories import make_item, make_member, make_project

pytestmark = pytest.mark.django_db


def short_team_project(n_items=3, team=2, **kwargs):
    """votes_per_item 3 and a smaller team: every item ends stuck."""
    project = make_project(votes_per_item=3, **kwargs)
    domain = project.domains.get(slug="general_preference")
    items = [make_item(project, domain=domain) for _ in range(n_items)]
    Verdict.objects.bulk_create([Verdict(item=i, project=project) for i in items])
    annotators = [make_member(project) for _ in range(team)]
    for user in annotators:
        while (a := claim_next_item(project=project, annotator=user)) is not None:
            submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice="1"))
    return project, items, annotators


def test_the_queue_lists_stuck_items_with_their_reason_in_constant_queries(
    client, django_assert_max_num_queries
):
    project, items, _ = short_team_project(n_items=3)
    client.force_login(make_member(project, role="curator"))
    url = reverse("curation_queue", args=[project.slug])
    with django_assert_max_num_queries(16):
        page = client.get(url, {"status": "stuck"})
    assert page.context["stuck_count"] == 3
    assert {v.item_id for v in page.context["page"].object_list} == {i.pk for i in items}
    assert b"stuck: needs 1 more vote; no annotator left who has not seen it" in page.content
    more = short_team_project(n_items=12)[0]
    client.force_login(make_member(more, role="curator"))
    with django_assert_max_num_queries(16):
        client.get(reverse("curation_queue", args=[more.slug]), {"status": "stuck"})


def test_project_page_and_dashboard_warn_curators_not_annotators(client):
    project, _, annotators = short_team_project(n_items=2)
    client.force_login(make_member(project, role="curator"))
    for name in ("project", "agreement"):
        page = client.get(reverse(name, args=[project.slug]))
        assert b"2 items stuck" in page.content, name
    client.force_login(annotators[0])
    assert b"stuck" not in client.get(reverse("project", args=[project.slug])).content


def test_a_curator_resolves_a_waiting_item_from_the_adjudication_page(client):
    project, items, _ = short_team_project(n_items=1)
    item = items[0]
    client.force_login(make_member(project, role="curator"))
    page = client.get(reverse("adjudicate", args=[project.slug, item.pk]))
    assert b'value="resolve" checked' in page.content
    assert b"No eligible annotator is left for this item" in page.content
    response = client.post(
        reverse("decide", args=[project.slug, item.pk]),
        {"action": "resolve", "choice": "1", "reason": "both agree", "version": 0, "next": "queue"},
    )
    assert response.status_code == 302
    v = Verdict.objects.get(item=item)
    assert (v.status, v.final_choice, v.provenance) == ("resolved", "1", "adjudicated")


def test_asking_for_more_votes_than_eligible_warns(client):
    project = make_project(votes_per_item=1)
    item = make_item(project, domain=project.domains.get(slug="general_preference"))
    Verdict.objects.create(item=item, project=project, status="contested")
    make_member(project)
    client.force_login(make_member(project, role="curator"))
    response = client.post(
        reverse("decide", args=[project.slug, item.pk]),
        {"action": "more_votes", "n": 3, "reason": "unsure", "version": 0, "next": "queue"},
    )
    assert response.status_code == 302
    texts = [str(m) for m in get_messages(response.wsgi_request)]
    assert any("Only 1 eligible annotator is left" in t for t in texts), texts


def test_the_rule_page_reports_what_moved(client):
    project = make_project(votes_per_item=3, escalation_votes=2)
    item = make_item(project, domain=project.domains.get(slug="general_preference"))
    Verdict.objects.create(item=item, project=project)
    team = [make_member(project) for _ in range(5)]
    for user, choice in zip(team[:3], "112", strict=True):
        a = claim_next_item(project=project, annotator=user)
        submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice=choice))
    client.force_login(make_member(project, role="admin"))
    response = client.post(
        reverse("rule_settings", args=[project.slug]),
        {"votes_per_item": 3, "agree_share": 0.8, "escalation_votes": 0},
        follow=True,
    )
    assert b"Rule saved. 1 item now contested." in response.content


def test_done_page_says_whether_anything_may_come_back(client):
    project = make_project(votes_per_item=2)
    make_item(project, domain=project.domains.get(slug="general_preference"))
    a, b, c = (make_member(project) for _ in range(3))
    held = claim_next_item(project=project, annotator=a)
    claim_next_item(project=project, annotator=b)
    client.force_login(c)
    page = client.get(reverse("work_done", args=[project.slug]))
    assert b"Nothing free for you right now" in page.content
    submit_judgement(assignment_id=held.pk, annotator=a, vote=Vote(choice="1"))
    client.force_login(a)
    page = client.get(reverse("work_done", args=[project.slug]))
    assert b"You are done with" in page.content
