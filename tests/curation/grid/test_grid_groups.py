"""Issue 34 in curation: the grid shows each item's group and criterion and
filters by group (page and API); the item page names both; the agreement
dashboard reports the share of complete groups whose items all reached
consensus, equal to a count straight from the verdicts."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from curation.agreement.groups import group_consensus
from curation.grid.filters import grid_rows
from curation.models import Verdict, VerdictStatus
from tests.factories import make_item, make_member, make_project

pytestmark = pytest.mark.django_db

STATES = {
    # group -> its items' verdict statuses
    "all-agreed": ["agreed", "agreed", "agreed"],
    "one-resolved": ["agreed", "resolved"],
    "one-contested": ["contested", "agreed"],
    "collecting": ["agreed", "needs_votes"],
    "one-excluded": ["excluded", "agreed"],
    "also-agreed": ["agreed"],
}


def world():
    project = make_project()
    items = {}
    for group, statuses in STATES.items():
        for n, status in enumerate(statuses):
            item = make_item(
                project,
                external_id=f"{group}-{n}",
                group_key=group,
                criterion=f"Is {group} <b>{n}</b> better?",
            )
            decided = status in ("agreed", "resolved")
            Verdict.objects.create(
                item=item,
                project=project,
                status=status,
                final_choice="1" if decided else "",
                provenance={"agreed": "unanimous", "resolved": "adjudicated"}.get(status, ""),
                exclusion_category="other" if status == "excluded" else "",
            )
            items[item.external_id] = item
    loose = make_item(project, external_id="loose")
    Verdict.objects.create(
        item=loose, project=project, status="agreed", final_choice="1", provenance="unanimous"
    )
    return project, items


def test_group_consensus_equals_a_count_from_the_verdicts():
    project, _ = world()
    figure = group_consensus(project)
    complete = {g: s for g, s in STATES.items() if "needs_votes" not in s}
    expected = sum(all(x == VerdictStatus.AGREED for x in s) for s in complete.values())
    assert (figure.groups, figure.complete, figure.consensus) == (6, 5, expected)
    assert expected == 2
    assert figure.share == pytest.approx(2 / 5, abs=1e-12)
    assert figure.collecting == 1
    assert group_consensus(make_project()) is None


def test_the_dashboard_shows_the_group_figure(client):
    project, _ = world()
    client.force_login(make_member(project, role="curator"))
    page = client.get(reverse("agreement", args=[project.slug])).content.decode()
    assert "2 of 5</strong> complete groups (40%) reached consensus" in page
    assert "1 group still collecting votes" in page


def test_the_grid_filters_by_group_and_shows_group_and_criterion(client):
    project, _ = world()
    rows = grid_rows(project, {"group": "one-resolved"})
    assert sorted(v.item.external_id for v in rows) == ["one-resolved-0", "one-resolved-1"]
    client.force_login(make_member(project, role="curator"))
    page = client.get(reverse("item_grid", args=[project.slug]), {"group": "all-agreed"})
    html = page.content.decode()
    assert "3 items match." in html
    assert "all-agreed-2" in html and "one-resolved-0" not in html
    assert "?group=all-agreed" in html
    assert "Criterion: Is all-agreed &lt;b&gt;0&lt;/b&gt; better?" in html


def test_the_items_api_filters_by_group_and_returns_group_and_criterion():
    project, _ = world()
    api = APIClient()
    api.force_authenticate(make_member(project, role="curator"))
    body = api.get(reverse("api_items", args=[project.slug]), {"group": "also-agreed"}).json()
    assert [r["external_id"] for r in body["results"]] == ["also-agreed-0"]
    assert body["results"][0]["group"] == "also-agreed"
    assert body["results"][0]["criterion"] == "Is also-agreed <b>0</b> better?"


def test_the_item_page_names_group_and_criterion(client):
    project, items = world()
    client.force_login(make_member(project, role="curator"))
    item = items["one-contested-0"]
    html = client.get(reverse("adjudicate", args=[project.slug, item.pk])).content.decode()
    assert 'id="item-group"' in html and "Group one-contested" in html
    assert "?group=one-contested" in html
    assert "Criterion:</strong> Is one-contested &lt;b&gt;0&lt;/b&gt; better?" in html


def test_annotators_see_no_grid_filtered_by_group(client):
    project, _ = world()
    client.force_login(make_member(project, role="annotator"))
    response = client.get(reverse("item_grid", args=[project.slug]), {"group": "all-agreed"})
    assert response.status_code in (403, 404)
