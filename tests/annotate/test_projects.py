"""annotate.projects: who sees a project and in what role, written once.
member's role; strangers 404, members without the role 403."""

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.http import Http404

from annotate.models import Role
from annotate.projects import CURATOR_ROLES, project_for
from tests.factories import make_member, make_project, make_user

pytestmark = pytest.mark.django_db


def test_a_member_gets_the_project_and_role_in_one_query(django_assert_num_queries):
    project = make_project()
    make_project()  # another project, where the member is not
    curator = make_member(project, role=Role.CURATOR)
    with django_assert_num_queries(1):
        found, role = project_for(curator, project.slug)
    assert (found.pk, role) == (project.pk, Role.CURATOR)
    with django_assert_num_queries(1):
        assert project_for(curator, project.slug, CURATOR_ROLES)[1] == Role.CURATOR


def test_strangers_unknown_slugs_and_wrong_roles_are_refused():
    project, other = make_project(), make_project()
    annotator = make_member(project)
    make_member(other, user=annotator, role=Role.ADMIN)  # admin elsewhere only
    with pytest.raises(Http404):
        project_for(make_user(), project.slug)
    with pytest.raises(Http404):
        project_for(annotator, "no-such-project")
    with pytest.raises(Http404):
        project_for(AnonymousUser(), project.slug)
    with pytest.raises(PermissionDenied):
        project_for(annotator, project.slug, CURATOR_ROLES)
    assert project_for(annotator, other.slug, CURATOR_ROLES)[1] == Role.ADMIN


def test_a_superuser_is_admin_everywhere(django_assert_num_queries):
    project = make_project()
    admin = make_user(is_superuser=True)
    with django_assert_num_queries(1):
        assert project_for(admin, project.slug) == (project, Role.ADMIN)
