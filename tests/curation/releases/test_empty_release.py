"""A release that would hold no item is refused by every caller (page, API,
management command) before its row exists, so its version stays free; a
release emptied between cutting and building fails and publishes nothing."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from curation.models import Release, ReleaseStatus, Verdict
from curation.releases.build import build_release
from curation.releases.service import NothingToRelease, create_release
from tests.curation.releases.test_releases import ALL_DOMAINS, form_data, make_release_project
from tests.factories import make_member

pytestmark = pytest.mark.django_db

UNDECIDED = {
    "status": "needs_votes",
    "final_choice": "",
    "provenance": "",
    "exclusion_category": "",
}
FIELDS = ("status", "final_choice", "provenance", "exclusion_category")


@pytest.fixture
def project(tmp_path):
    return make_release_project(tmp_path)


@pytest.fixture
def undecided(project):
    """The same project with no item agreed or resolved."""
    Verdict.objects.filter(project=project).update(**UNDECIDED)
    return project


def test_the_service_refuses_and_records_nothing(undecided):
    with pytest.raises(NothingToRelease, match="Nothing to release"):
        create_release(
            project=undecided, version="v1.0", notes="", domains=ALL_DOMAINS, seed=1, user=None
        )
    assert not Release.objects.exists()


def test_domains_without_a_decided_item_are_refused_too(project):
    """knowledge holds know_1 (agreed); safety's decided items are taken away."""
    Verdict.objects.filter(project=project, item__domain__slug="safety").update(**UNDECIDED)
    with pytest.raises(NothingToRelease):
        create_release(
            project=project, version="v1.0", notes="", domains=["safety"], seed=1, user=None
        )
    release = create_release(
        project=project, version="v1.0", notes="", domains=["safety", "knowledge"], seed=1,
        user=None, enqueue=False,
    )  # fmt: skip
    assert release.version == "v1.0"


def test_the_page_shows_the_message_and_the_version_stays_free(client, undecided):
    client.force_login(make_member(undecided, role="curator"))
    url = reverse("release_new", args=[undecided.slug])
    response = client.post(url, form_data("v1.0"))
    assert response.status_code == 400
    assert b"Nothing to release" in response.content
    assert not Release.objects.exists()
    assert b'value="v1.0"' in client.get(url).content  # still offered as the next version


def test_the_api_refuses_with_400_and_the_message(undecided):
    api = APIClient()
    user = make_member(undecided, role="curator")
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    response = api.post(f"/api/v1/projects/{undecided.slug}/releases/", {"version": "v1.0"})
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "nothing_to_release" and "Nothing to release" in error["message"]
    assert not Release.objects.exists()


def test_the_command_refuses_and_then_builds_once_items_are_decided(project):
    decided = {v["pk"]: v for v in Verdict.objects.filter(project=project).values("pk", *FIELDS)}
    Verdict.objects.filter(project=project).update(**UNDECIDED)
    with pytest.raises(CommandError, match="Nothing to release"):
        call_command("build_release", project.slug, "v1.0", verbosity=0)
    assert not Release.objects.exists()
    for pk, fields in decided.items():  # decided again: the same version now builds
        Verdict.objects.filter(pk=pk).update(**{f: fields[f] for f in FIELDS})
    call_command("build_release", project.slug, "v1.0", verbosity=0)
    assert Release.objects.get().status == ReleaseStatus.READY


def test_a_release_emptied_before_its_build_fails_and_publishes_nothing(project):
    release = create_release(
        project=project, version="v1.0", notes="", domains=ALL_DOMAINS, seed=1, user=None,
        enqueue=False,
    )  # fmt: skip
    Verdict.objects.filter(project=project).update(**UNDECIDED)
    with pytest.raises(Exception, match="Nothing to release"):
        build_release(release_id=release.pk)
    release.refresh_from_db()
    assert release.status == ReleaseStatus.FAILED and "Nothing to release" in release.error
    assert not release.folder and not release.archive
