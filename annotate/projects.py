"""Who may see a project, and in what role: the membership rule, written once.

A user sees a project when they hold an active membership of it, in that
membership's role; a superuser sees every project, as its admin; anyone else
(a stranger, a deactivated or removed member, an anonymous visitor) sees
nothing. An annotator's assignments are theirs to read and judge only in a
project they see: a member removed from a project loses the items they hold
there at once.

Every caller asks through the QuerySets below (wired as the managers of
Project and Assignment): pages with project_for() (a stranger gets 404, a
member without the role 403), the API with annotate.api.projects.
project_for_api (the same, as DRF's errors). The raw statements of
annotate.loop.postgres embed MEMBER_SQL, the same condition in SQL, which
tests/annotate/test_projects.py proves selects exactly what the QuerySets
select.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import F, Q, Value
from django.http import Http404

if TYPE_CHECKING:
    from annotate.models import Project


class Role(models.TextChoices):
    ANNOTATOR = "annotator", "Annotator"
    CURATOR = "curator", "Curator"
    ADMIN = "admin", "Admin"


CURATOR_ROLES = (Role.CURATOR, Role.ADMIN)
ADMIN_ROLES = (Role.ADMIN,)


def _member(user, project: str = "") -> Q:
    """The rule as a filter on rows that reach their project through
    `project` (a lookup path ending in "__", or "" on Project itself)."""
    if not user.is_authenticated:
        return Q(pk__in=[])
    if user.is_superuser:
        return Q()
    return Q(**{f"{project}memberships__user": user, f"{project}memberships__is_active": True})


class ProjectQuerySet(models.QuerySet["Project"]):
    def visible_to(self, user) -> ProjectQuerySet:
        """The projects `user` sees, each with `member_role`: their role in it.
        (One membership per project and user: the join adds no rows.)"""
        projects = self.filter(_member(user))
        if user.is_authenticated and user.is_superuser:
            return projects.annotate(member_role=Value(Role.ADMIN))
        return projects.annotate(member_role=F("memberships__role"))


class AssignmentQuerySet(models.QuerySet):
    def own(self, user) -> AssignmentQuerySet:
        """`user`'s assignments in the projects they see."""
        if not user.is_authenticated:
            return self.none()
        return self.filter(Q(annotator=user) & _member(user, "item__project__"))


# The rule in raw SQL, with named parameters %(user)s and %(superuser)s
# (user.is_superuser); `{project}` is the SQL expression of the project's id.
MEMBER_SQL = """(%(superuser)s OR EXISTS (
    SELECT 1 FROM annotate_membership m
    WHERE m.project_id = {project} AND m.user_id = %(user)s AND m.is_active))"""


def project_for(user, slug: str, roles: tuple[str, ...] | None = None) -> tuple[Project, str]:
    """The project `slug` and `user`'s role in it, in one query, for a page:
    404 if they do not see it, 403 if their role is not one of `roles`."""
    from annotate.models import Project  # (the models import this module)

    project = Project.objects.visible_to(user).filter(slug=slug).first()
    if project is None:
        raise Http404("No such project")
    role: str = project.member_role  # type: ignore[attr-defined]  # (visible_to's)
    if roles is not None and role not in roles:
        raise PermissionDenied("Your role in this project does not allow this page.")
    return project, role


# --- Body checks (common.body_guard): the rule above, from the URL alone, run
# before anything reads a request's body.


def member_of(roles: tuple[str, ...] | None = None):
    """The body check of a view of project `slug`: 404 for a user who does
    not see it, 403 if their role is not one of `roles` (None: any role)."""

    def check(user, *, slug: str, **_kwargs) -> None:
        project_for(user, slug, roles)

    return check
