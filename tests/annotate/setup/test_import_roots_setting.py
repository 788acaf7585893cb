"""Which of the site's IMPORT_ROOTS a project may read (issue 29): chosen by a
site admin on the settings page or through the API, never by the project's
own admins; the migration keeps a single-team install's roots."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.models import Project, SetupEvent
from annotate.setup import service
from tests.factories import make_member, make_project, make_user
from tests.migrations import migrate, migrated_to

ROOTS = ["/srv/team-a", "/srv/team-b", "s3://bucket/team-c"]


@pytest.fixture
def site(settings):
    settings.IMPORT_ROOTS = list(ROOTS)
    project = make_project(slug="bench")
    return project, make_member(project, role="admin"), make_user(is_superuser=True)


@pytest.mark.django_db
def test_a_site_admin_chooses_roots_in_the_sites_order_and_it_is_audited(site):
    project, _, root = site
    chosen = service.set_import_roots(actor=root, project=project, roots=[ROOTS[2], ROOTS[0]])
    assert chosen == [ROOTS[0], ROOTS[2]]
    project.refresh_from_db()
    assert project.import_roots == [ROOTS[0], ROOTS[2]]
    event = SetupEvent.objects.get(action="import_roots_changed")
    assert event.before == {"import_roots": []}
    assert event.after == {"import_roots": [ROOTS[0], ROOTS[2]]}


@pytest.mark.django_db
def test_a_root_the_site_does_not_list_is_refused_naming_it(site):
    project, _, root = site
    with pytest.raises(service.SetupError, match="/etc") as exc:
        service.set_import_roots(actor=root, project=project, roots=["/etc"])
    assert exc.value.field == "import_roots"
    project.refresh_from_db()
    assert project.import_roots == []


@pytest.mark.django_db
def test_a_project_admin_cannot_choose_roots(site):
    project, admin, _ = site
    with pytest.raises(PermissionDenied):
        service.set_import_roots(actor=admin, project=project, roots=[ROOTS[1]])
    project.refresh_from_db()
    assert project.import_roots == []


# --- The settings page ---------------------------------------------------------------------


@pytest.mark.django_db
def test_the_settings_page_offers_the_roots_form_to_site_admins_only(client, site):
    project, admin, root = site
    url = reverse("project_settings", args=[project.slug])
    client.force_login(admin)
    page = client.get(url).content.decode()
    assert "No import root: server paths are off for this project" in page
    assert reverse("project_import_roots", args=[project.slug]) not in page
    client.force_login(root)
    page = client.get(url).content.decode()
    assert reverse("project_import_roots", args=[project.slug]) in page
    assert f'value="{ROOTS[1]}"' in page


@pytest.mark.django_db
def test_a_site_admin_saves_roots_on_the_settings_page(client, site):
    project, admin, root = site
    client.force_login(root)
    url = reverse("project_import_roots", args=[project.slug])
    response = client.post(url, {"import_roots": [ROOTS[1]]})
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.import_roots == [ROOTS[1]]
    # The project's admin now sees which folders they may use.
    client.force_login(admin)
    page = client.get(reverse("project_settings", args=[project.slug])).content.decode()
    assert f"<li><code>{ROOTS[1]}</code></li>" in page


@pytest.mark.django_db
def test_a_project_admin_posting_roots_is_refused(client, site):
    project, admin, _ = site
    client.force_login(admin)
    url = reverse("project_import_roots", args=[project.slug])
    assert client.post(url, {"import_roots": [ROOTS[1]]}).status_code == 403
    project.refresh_from_db()
    assert project.import_roots == []


@pytest.mark.django_db
def test_a_root_not_offered_is_a_form_error(client, site):
    project, _, root = site
    client.force_login(root)
    url = reverse("project_import_roots", args=[project.slug])
    response = client.post(url, {"import_roots": ["/etc"]}, follow=True)
    assert "Select a valid choice. /etc is not one of the available choices." in (
        response.content.decode()
    )
    project.refresh_from_db()
    assert project.import_roots == []


# --- The API -----------------------------------------------------------------------------


def api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


@pytest.mark.django_db
def test_the_api_lets_a_site_admin_choose_roots(site):
    project, admin, root = site
    url = f"/api/v1/projects/{project.slug}/"
    response = api(root).patch(url, {"import_roots": [ROOTS[0]]}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["import_roots"] == [ROOTS[0]]
    assert api(admin).get(url).json()["import_roots"] == [ROOTS[0]]
    # Annotators are not told the server's folders.
    annotator = make_member(project)
    assert api(annotator).get(url).json()["import_roots"] is None


@pytest.mark.django_db
def test_the_api_refuses_roots_from_a_project_admin_and_changes_nothing(site):
    project, admin, _ = site
    url = f"/api/v1/projects/{project.slug}/"
    response = api(admin).patch(url, {"import_roots": [ROOTS[1]], "name": "X"}, format="json")
    assert response.status_code == 403
    project.refresh_from_db()
    assert (project.import_roots, project.name) == ([], "Project" + project.name[7:])
    assert project.name != "X"


@pytest.mark.django_db
def test_the_api_names_a_root_the_site_does_not_list(site):
    project, _, root = site
    response = api(root).patch(
        f"/api/v1/projects/{project.slug}/", {"import_roots": ["/etc"]}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["error"]["fields"]["import_roots"] == [
        "not an import root of this site (IMPORT_ROOTS): /etc"
    ]


# --- The migration -------------------------------------------------------------------------

BEFORE = [("annotate", "0016_judgement_flagged_and_item_search")]
AFTER = [("annotate", "0017_project_import_roots")]


def _projects_with_admins(apps, admins_per_project):
    User = apps.get_model("auth", "User")
    Project = apps.get_model("annotate", "Project")
    Membership = apps.get_model("annotate", "Membership")
    for n, admins in enumerate(admins_per_project):
        project = Project.objects.create(slug=f"p{n}", name=f"p{n}")
        for m, name in enumerate(admins):
            user, _ = User.objects.get_or_create(username=name)
            Membership.objects.create(project=project, user=user, role="admin", pseudonym=f"A{m}")


@pytest.mark.django_db(transaction=True)
def test_the_migration_keeps_a_single_teams_roots(settings):
    settings.IMPORT_ROOTS = list(ROOTS[:2])
    with migrated_to(BEFORE) as apps:
        _projects_with_admins(apps, [["ann", "bob"], ["bob", "ann"]])
        migrate(AFTER)
        assert sorted(Project.objects.values_list("import_roots", flat=True)) == [
            ROOTS[:2],
            ROOTS[:2],
        ]


@pytest.mark.django_db(transaction=True)
def test_the_migration_gives_several_teams_no_root(settings):
    settings.IMPORT_ROOTS = list(ROOTS[:2])
    with migrated_to(BEFORE) as apps:
        _projects_with_admins(apps, [["ann"], ["eve"]])
        migrate(AFTER)
        assert list(Project.objects.values_list("import_roots", flat=True)) == [[], []]
