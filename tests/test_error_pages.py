"""Issue 31, "no dead ends": 400/403/404/405/500 are pages in the site's
layout with the way back (JSON under /api/), the CSRF refusal says to
reload, and /favicon.ico leads to the vendored icon."""

import json

import pytest
from django.test import Client
from django.urls import reverse

from annotate.models import Membership
from tests.factories import make_project, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def annotator_client():
    project = make_project(slug="errs")
    user = make_user("ann")
    Membership.objects.create(project=project, user=user, role="annotator")
    client = Client()
    client.force_login(user)
    return project, client


def test_unknown_page_is_a_styled_404_with_the_way_back(client):
    r = client.get("/no/such/page/", HTTP_REFERER="http://testserver/")
    assert r.status_code == 404
    html = r.content.decode()
    assert "<title>Page not found · Triplet Studio</title>" in html
    assert 'href="/static/css/app.css"' in html or "css/app" in html  # the site's layout
    assert "Back to the page you came from" in html and 'href="/"' in html
    assert "Your projects" in html
    assert "favicon" in html
    assert "Log in</a> if this is one of your pages" in html


def test_wrong_role_is_a_styled_403_naming_the_reason(annotator_client):
    project, client = annotator_client
    r = client.get(reverse("curation_queue", args=[project.slug]))
    assert r.status_code == 403
    html = r.content.decode()
    assert "You cannot open this page" in html
    assert "Your role in this project does not allow this page." in html
    assert f'href="/p/{project.slug}/"' in html  # up to the project page
    assert "403 Forbidden" not in html


def test_bookmarked_form_url_is_a_405_page_with_the_page_above(annotator_client):
    project, client = annotator_client
    r = client.get(f"/p/{project.slug}/curation/1/decide/")
    assert r.status_code == 405
    assert r["Allow"] == "POST"
    html = r.content.decode()
    assert "This address is for a form" in html
    assert "This address accepts: POST." in html
    assert f'href="/p/{project.slug}/curation/1/"' in html
    assert 'href="/"' in html


def test_api_refusals_stay_json(annotator_client):
    project, client = annotator_client
    r = client.get("/api/v1/no-such-thing/")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    r = client.post(f"/api/v1/projects/{project.slug}/")
    assert r.status_code in (403, 405) and "error" in r.json()


def test_stale_form_gets_the_403_page_saying_to_reload(annotator_client):
    project, _ = annotator_client
    client = Client(enforce_csrf_checks=True)
    client.force_login(Membership.objects.get(project=project).user)
    # A form the annotator may send (the body guard answers a stranger or a
    # wrong role first), without its CSRF token: as a page left open too long.
    r = client.post(f"/p/{project.slug}/work/", {})
    assert r.status_code == 403
    html = r.content.decode()
    assert "Reload the page and send it again" in html and "Your projects" in html


def test_server_error_is_a_styled_500_and_json_under_api(rf):
    from common.api.errors import server_error

    r = server_error(rf.get("/p/x/"))
    assert r.status_code == 500 and b"Something went wrong on our side" in r.content
    r = server_error(rf.get("/api/v1/x/"))
    assert r.status_code == 500 and json.loads(r.content)["error"]["code"] == "server_error"


def test_favicon_probe_leads_to_the_vendored_icon(client):
    r = client.get("/favicon.ico")
    assert r.status_code == 302 and r["Location"].endswith(".ico")
    assert "favicon" in r["Location"]
