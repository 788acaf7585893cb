"""Property-based: schemathesis generates requests from the generated OpenAPI
schema and sends them through the WSGI app as an authenticated admin who is
also annotating. No answer may be a 5xx, and every answer must match the
schema (status code, content type, body). Bounded: a few examples per
operation, so the run takes seconds."""

import json

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis import checks

from annotate.loop.service import claim_next_item
from curation.models import Evaluation, Release, Verdict
from tests.factories import make_item, make_member, make_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    project = make_project(slug="st", votes_per_item=2)
    user = make_member(project, role="admin")
    items = [make_item(project, model_1="m-a", model_2="m-b") for _ in range(3)]
    for item in items:
        Verdict.objects.create(item=item, project=project)
    assignment = claim_next_item(project=project, annotator=user)
    release = Release.objects.create(project=project, version="v1", domains=["vqa"])
    evaluation = Evaluation.objects.create(release=release, name="m", predictions="p.jsonl")
    return {
        "token": Token.objects.create(user=user).key,
        "path": {
            "slug": project.slug,
            "assignment_id": assignment.pk,
            "item_id": items[0].pk,
            "release_id": release.pk,
            "evaluation_id": evaluation.pk,
        },
    }


def generated_schema() -> dict:
    """The schema exactly as /api/schema/ serves it (generated, not written)."""
    from drf_spectacular.generators import SchemaGenerator
    from drf_spectacular.renderers import OpenApiJsonRenderer

    raw = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(raw, renderer_context={}))


schema = schemathesis.openapi.from_dict(generated_schema())
schema.app = WSGIHandler()


@pytest.fixture(autouse=True)
def _keep_the_test_connection():
    # Requests go through the WSGI handler on this thread and this test's
    # connection; Django would close that connection (it is inside the test's
    # transaction) at the end of each request, as its test client knows.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def test_the_served_schema_is_the_generated_one(client):
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    assert json.loads(response.content) == generated_schema()


@schema.parametrize()
@settings(
    max_examples=4,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_api_answers_match_the_schema(case, world):
    # Real objects in the path, so the bodies reach validation and the services.
    for name in case.path_parameters or {}:
        if name in world["path"]:
            case.path_parameters[name] = world["path"][name]
    case.call_and_validate(
        headers={"Authorization": f"Token {world['token']}"},
        checks=[
            checks.not_a_server_error,
            checks.status_code_conformance,
            checks.content_type_conformance,
            checks.response_schema_conformance,
        ],
    )
