"""Issue 33 leftovers: the project settings of best-of-N and ranking
projects. "None is acceptable" is optional per project (settings page and
API; the compare page's choice and key 0; the vote service refuses it when
off), and the Kendall's W of the ranking rule is a project setting (default
0.5, the rule settings page; changing it re-decides the open items)."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.loop import rules
from annotate.loop.service import DisplayedVote, JudgementInvalid, submit_judgement
from annotate.models import Project, Task
from curation.models import AuditEvent, Verdict
from tests.annotate.loop.test_ranking_votes import claimed
from tests.curation.verdicts.ranked_factories import rank_vote, ranked_item, ranked_project
from tests.factories import make_member, make_project

pytestmark = pytest.mark.django_db


def api_for(user):
    api = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return api


def test_defaults_keep_none_and_the_w_the_rule_had():
    project = make_project(task=Task.RANKING)
    assert project.allow_none_pick is True and project.ranking_least_w == 0.5


def test_without_none_the_page_offers_no_none_and_the_service_refuses_it(client):
    project, _, user, a = claimed(Task.BEST_OF_N, order="3142", allow_none_pick=False)
    client.force_login(user)
    page = client.get(reverse("work_item", args=[a.pk])).content.decode()
    assert 'id="pick-none"' not in page and "None of them is acceptable" not in page
    refused = client.post(
        reverse("work_submit", args=[a.pk]), {"task": "best_of_n", "n": "4", "pick": "none"}
    )
    assert refused.status_code == 400
    assert "no “none” answer" in refused.content.decode()
    with pytest.raises(JudgementInvalid):
        submit_judgement(
            assignment_id=a.pk,
            annotator=user,
            vote=DisplayedVote(task=Task.BEST_OF_N, choice=rules.NONE_PICKED),
        )
    # With it on (the default), the same page offers it with its key.
    Project.objects.filter(pk=project.pk).update(allow_none_pick=True)
    page = client.get(reverse("work_item", args=[a.pk])).content.decode()
    assert 'id="pick-none"' in page and "None of them is acceptable" in page


def test_the_settings_page_and_api_change_none_is_acceptable(client):
    project = make_project(task=Task.BEST_OF_N)
    admin = make_member(project, role="admin")
    client.force_login(admin)
    url = reverse("project_settings", args=[project.slug])
    assert 'name="allow_none_pick"' in client.get(url).content.decode()
    r = api_for(admin).patch(
        f"/api/v1/projects/{project.slug}/", {"allow_none_pick": False}, format="json"
    )
    assert r.status_code == 200, r.content
    assert r.json()["allow_none_pick"] is False and r.json()["ranking_least_w"] == 0.5
    project.refresh_from_db()
    assert project.allow_none_pick is False
    bad = api_for(admin).patch(
        f"/api/v1/projects/{project.slug}/", {"allow_none_pick": "maybe"}, format="json"
    )
    assert bad.status_code == 400


def test_the_api_creates_a_project_with_its_w_and_refuses_one_out_of_range():
    admin = make_member(make_project(), role="admin")
    admin.is_superuser = True
    admin.save()
    api = api_for(admin)
    r = api.post("/api/v1/projects/", {"name": "W", "ranking_least_w": 0.7}, format="json")
    assert r.status_code == 201, r.content
    assert Project.objects.get(slug=r.json()["slug"]).ranking_least_w == 0.7
    r = api.post("/api/v1/projects/", {"name": "W2", "ranking_least_w": 1.5}, format="json")
    assert r.status_code == 400 and "ranking_least_w" in r.content.decode()


def test_the_rule_page_sets_w_and_re_decides_the_items_with_it(client):
    # Kendall's W of these three rankings: 12 * 35 / (3**2 * (4**3 - 4)) = 0.777…
    project = ranked_project(votes_per_item=3, escalation_votes=0, agree_share=0.8)
    item = ranked_item(project)
    for ranks in ([1, 2, 3, 4], [1, 3, 2, 4], [1, 2, 4, 3]):
        rank_vote(item, ranks)
    assert Verdict.objects.get(item=item).status == "agreed"  # W 0.78 >= 0.5

    admin = make_member(project, role="admin")
    client.force_login(admin)
    url = reverse("rule_settings", args=[project.slug])
    assert "Least Kendall" in client.get(url).content.decode()
    rule = {"votes_per_item": 3, "agree_share": 0.8, "escalation_votes": 0}
    assert client.post(url, {**rule, "ranking_least_w": 1.2}).status_code == 400
    assert client.post(url, {**rule, "ranking_least_w": 0.8}).status_code == 302
    project.refresh_from_db()
    assert project.ranking_least_w == 0.8
    assert Verdict.objects.get(item=item).status == "contested"  # 0.78 < 0.8
    event = AuditEvent.objects.filter(project=project, action="thresholds").get()
    assert (event.before["ranking_least_w"], event.after["ranking_least_w"]) == (0.5, 0.8)
    assert client.post(url, {**rule, "ranking_least_w": 0.75}).status_code == 302
    assert Verdict.objects.get(item=item).status == "agreed"


def test_a_pair_project_s_rule_page_has_no_w():
    project = make_project()
    admin = make_member(project, role="admin")
    from django.test import Client

    client = Client()
    client.force_login(admin)
    page = client.get(reverse("rule_settings", args=[project.slug])).content.decode()
    assert "Least Kendall" not in page
