"""Project-scoped access: a stranger gets 404, a member without the role 403."""

from django.core.exceptions import PermissionDenied
from django.db.models import F
from django.http import Http404

from .models import Project, Role

CURATOR_ROLES = (Role.CURATOR, Role.ADMIN)
ADMIN_ROLES = (Role.ADMIN,)


def project_for(user, slug: str, roles: tuple[str, ...] | None = None) -> tuple[Project, str]:
    """The project `slug` if `user` is a member (with one of `roles`, if given),
    and the user's role in it: one query, the project with the member's role
    (a superuser's role is admin in every project)."""
    if not user.is_authenticated:
        raise Http404("No such project")
    if user.is_superuser:
        project, role = Project.objects.filter(slug=slug).first(), Role.ADMIN
    else:
        # One membership per (project, user): the join adds no duplicate rows.
        # A deactivated member is a stranger here.
        project = (
            Project.objects.filter(slug=slug, memberships__user=user, memberships__is_active=True)
            .annotate(member_role=F("memberships__role"))
            .first()
        )
        role = project.member_role if project is not None else None
    if project is None or role is None:
        raise Http404("No such project")
    if roles is not None and role not in roles:
        raise PermissionDenied("Your role in this project does not allow this page.")
    return project, role
