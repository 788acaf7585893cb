"""annotate.projects: who sees a project and in what role, written once.
project_for answers in one query; strangers 404, members without the role
403. The raw-SQL form of the rule selects exactly what the QuerySets do."""

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.http import Http404
from rest_framework import exceptions

from annotate.api.projects import project_for_api
from annotate.models import Assignment, Membership, Project, Role
from annotate.projects import CURATOR_ROLES, MEMBER_SQL, project_for
from tests.factories import make_assignment, make_item, make_member, make_project, make_user

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


def test_the_api_wrapper_answers_as_the_page_one_with_drfs_errors(django_assert_num_queries):
    project, other = make_project(), make_project()
    annotator = make_member(project)
    with django_assert_num_queries(1):
        assert project_for_api(annotator, project.slug)[1] == Role.ANNOTATOR
    with pytest.raises(exceptions.NotFound):
        project_for_api(annotator, other.slug)
    with pytest.raises(exceptions.PermissionDenied):
        project_for_api(annotator, project.slug, CURATOR_ROLES)


def test_a_deactivated_member_is_a_stranger():
    project = make_project()
    user = make_member(project, role=Role.CURATOR, is_active=False)
    with pytest.raises(Http404):
        project_for(user, project.slug)
    assert not Project.objects.visible_to(user).exists()


def everyone_and_their_assignments():
    """Two projects, and a user of each kind with an assignment in each."""
    projects = [make_project(), make_project()]
    users = {
        "member of both": make_user(),
        "member of the first": make_user(),
        "deactivated in the first": make_user(),
        "stranger": make_user(),
        "superuser": make_user(is_superuser=True),
    }
    for project in projects:
        make_member(project, user=users["member of both"], role=Role.CURATOR)
    make_member(projects[0], user=users["member of the first"])
    make_member(projects[0], user=users["deactivated in the first"], is_active=False)
    make_member(projects[1], user=users["deactivated in the first"])
    for project in projects:
        # (live_assignments counts the open leases made below.)
        item = make_item(project, votes_needed=len(users), live_assignments=len(users))
        for user in users.values():
            make_assignment(item, user)
    return projects, users


def raw_ids(sql: str, user) -> set[int]:
    with connection.cursor() as cursor:
        cursor.execute(sql, {"user": user.pk, "superuser": user.is_superuser})
        return {row[0] for row in cursor.fetchall()}


def test_the_raw_sql_rule_selects_what_the_querysets_select():
    """MEMBER_SQL (in annotate.loop.postgres's statements) and the QuerySets,
    for every kind of user: the projects they see and their own assignments."""
    projects, users = everyone_and_their_assignments()
    own_sql = f"""
        SELECT a.id FROM annotate_assignment a
        INNER JOIN annotate_item i ON i.id = a.item_id
        WHERE a.annotator_id = %(user)s AND {MEMBER_SQL.format(project="i.project_id")}"""
    projects_sql = f"SELECT p.id FROM annotate_project p WHERE {MEMBER_SQL.format(project='p.id')}"
    seen = {}
    for name, user in users.items():
        own = set(Assignment.objects.own(user).values_list("pk", flat=True))
        assert raw_ids(own_sql, user) == own, name
        visible = set(Project.objects.visible_to(user).values_list("pk", flat=True))
        assert raw_ids(projects_sql, user) == visible, name
        seen[name] = (len(visible), len(own))
    # And the rule is the one stated: active memberships, all for a superuser.
    assert seen == {
        "member of both": (2, 2),
        "member of the first": (1, 1),
        "deactivated in the first": (1, 1),
        "stranger": (0, 0),
        "superuser": (2, 2),
    }
    Membership.objects.filter(user=users["member of both"], project=projects[0]).delete()
    assert Assignment.objects.own(users["member of both"]).count() == 1
    assert raw_ids(own_sql, users["member of both"]) == set(
        Assignment.objects.own(users["member of both"]).values_list("pk", flat=True)
    )


def test_each_project_comes_with_the_users_own_role():
    projects, users = everyone_and_their_assignments()
    make_member(projects[0], user=users["stranger"], role=Role.ADMIN)
    roles = dict(Project.objects.visible_to(users["stranger"]).values_list("pk", "member_role"))
    assert roles == {projects[0].pk: Role.ADMIN}
    roles = dict(Project.objects.visible_to(users["superuser"]).values_list("pk", "member_role"))
    assert roles == {projects[0].pk: Role.ADMIN, projects[1].pk: Role.ADMIN}
    assert not Project.objects.visible_to(AnonymousUser()).exists()
    assert not Assignment.objects.own(AnonymousUser()).exists()
