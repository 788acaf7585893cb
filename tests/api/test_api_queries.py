"""List endpoints run a constant number of queries whatever the data size."""

from contextlib import contextmanager

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from curation.models import Evaluation, Release, Verdict
from tests.factories import make_item, make_member, make_project

pytestmark = pytest.mark.django_db


@contextmanager
def counted():
    with CaptureQueriesContext(connection) as ctx:
        yield ctx


def queries(client, url) -> int:
    with counted() as ctx:
        response = client.get(url)
    assert response.status_code == 200, response.content
    return len(ctx.captured_queries)


def grow(project, user, n: int) -> Release:
    """n more items with verdicts, projects, releases and evaluations."""
    release = None
    for i in range(n):
        item = make_item(project)
        Verdict.objects.create(item=item, project=project, reason=f"r{i}")
        other = make_project()
        make_member(other, user, role="annotator")
        release = Release.objects.create(
            project=project, version=f"v{Release.objects.count()}", domains=["vqa"], created_by=user
        )
        Evaluation.objects.create(
            release=Release.objects.filter(project=project).order_by("pk").first(),
            name=f"m{Evaluation.objects.count()}",
            predictions="p.jsonl",
            accuracy=0.5,
            created_by=user,
        )
    return release


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        # token, count, page
        ("/api/v1/projects/", 3),
        # token, project+role, count, page
        ("/api/v1/projects/q/domains/", 4),
        ("/api/v1/projects/q/verdicts/", 4),
        ("/api/v1/projects/q/verdicts/?status=needs_votes&domain=vqa", 4),
        ("/api/v1/projects/q/releases/", 4),
        # token, project+role, release, count, page
        ("/api/v1/projects/q/releases/{first}/evaluations/", 5),
    ],
)
def test_list_queries_do_not_grow_with_the_data(url, expected):
    project = make_project(slug="q")
    user = make_member(project, role="curator")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    grow(project, user, 2)
    first = Release.objects.filter(project=project).order_by("pk").first().pk
    url = url.format(first=first)
    small = queries(client, url)
    grow(project, user, 8)
    large = queries(client, url)
    assert small == large == expected
    assert client.get(url).json()["count"] >= 6 or "domains" in url
