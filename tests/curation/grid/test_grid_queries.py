"""The grid's page and API run the same statements whatever the project's
size, for the default page and every filter and sort the bench times (and
the same on SQLite and PostgreSQL: the count, the page's rows, then the
page's thumbnails and flags)."""

from __future__ import annotations

import random

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.curation.grid.test_grid_equality import random_project
from tests.factories import make_member

pytestmark = pytest.mark.django_db

QUERIES = [
    {},
    {"status": "contested", "domain": "reasoning", "sort": "-agreement"},
    {"votes_min": 3, "agreement_max": 0.7, "flagged": "yes"},
    {"flagged": "no", "gold": "no", "sort": "votes"},
    {"q": "chart", "sort": "-external_id"},
    {"kind": "problem", "agreement_min": 0.5, "sort": "updated"},
]


def statements(client, project, query: dict) -> tuple[int, int]:
    """Statements of one request of the page and one of the API (after a
    first one: sessions, caches); each must list rows."""
    counts = []
    for name in ("item_grid", "api_items"):
        url = reverse(name, args=[project.slug])
        client.get(url, query)
        with CaptureQueriesContext(connection) as captured:
            response = client.get(url, query)
        assert response.status_code == 200, (url, query, response.content[:500])
        if name == "api_items":
            assert response.json()["results"], query  # (an empty page reads less)
        counts.append(len(captured.captured_queries))
    return counts[0], counts[1]


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: "&".join(q) or "default")
def test_page_and_api_statements_do_not_grow_with_the_project(client, query):
    rng = random.Random(5)
    small, big = random_project(rng, 40), random_project(rng, 200)
    curator = make_member(small, role="curator")
    make_member(big, user=curator, role="curator")
    client.force_login(curator)
    assert statements(client, big, query) == statements(client, small, query)
    # Session, user, project, domains, count, rows, thumbnails, flags; and
    # for the page its bulk form's domains.
    assert statements(client, small, query) == (9, 8)
