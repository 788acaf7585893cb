"""REST API: who may see a project, and the project and domain lists."""

from __future__ import annotations

from django.db.models import OuterRef, Subquery, Value
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers
from rest_framework.views import APIView

from annotate.models import Domain, Membership, Project, Role
from common.api.errors import errors
from common.api.paging import PAGE_PARAMETERS, paginate, paginated

# --- Access -------------------------------------------------------------------------------


def project_for_api(user, slug: str, roles: tuple[str, ...] | None = None) -> tuple[Project, str]:
    """The project and the user's role in it, in one query. A stranger gets
    404 (the project's existence is not revealed), a member without one of
    `roles` 403 — the same rule as annotate.permissions.project_for."""
    projects = Project.objects.filter(slug=slug)
    if user.is_superuser:
        projects = projects.annotate(member_role=Value(Role.ADMIN))
    else:
        projects = projects.annotate(
            member_role=Subquery(
                Membership.objects.filter(project=OuterRef("pk"), user=user, is_active=True).values(
                    "role"
                )[:1]
            )
        )
    project = projects.first()
    role: str | None = getattr(project, "member_role", None)  # the annotation above
    if project is None or role is None:
        raise exceptions.NotFound("No such project.")
    if roles is not None and role not in roles:
        raise exceptions.PermissionDenied("Your role in this project does not allow this.")
    return project, role


# --- Projects and domains -----------------------------------------------------------------


class ProjectListApi(APIView):
    class OutputSerializer(serializers.Serializer):
        slug = serializers.SlugField()
        name = serializers.CharField()
        description = serializers.CharField()
        guidelines = serializers.CharField(help_text="Markdown.")
        role = serializers.ChoiceField(choices=Role.choices, source="member_role")
        votes_per_item = serializers.IntegerField()
        allow_tie = serializers.BooleanField()
        require_rationale = serializers.BooleanField()

    @extend_schema(
        operation_id="projects_list",
        summary="Projects you are a member of, with your role",
        responses={200: paginated(OutputSerializer), **errors(401, 404)},
        parameters=PAGE_PARAMETERS,
    )
    def get(self, request):
        user = request.user
        if user.is_superuser:
            projects = Project.objects.annotate(member_role=Value(Role.ADMIN))
        else:
            projects = Project.objects.filter(
                memberships__user=user, memberships__is_active=True
            ).annotate(
                member_role=Subquery(
                    Membership.objects.filter(project=OuterRef("pk"), user=user).values("role")[:1]
                )
            )
        return paginate(self, projects.order_by("name", "pk"), self.OutputSerializer)


class DomainListApi(APIView):
    class OutputSerializer(serializers.Serializer):
        slug = serializers.SlugField()
        title = serializers.CharField()
        export_category = serializers.CharField(help_text="The release's Category string.")
        kind = serializers.ChoiceField(choices=["correctness", "preference"])
        guidelines = serializers.CharField(help_text="Markdown.")

    @extend_schema(
        operation_id="domains_list",
        summary="The project's domains",
        responses={200: paginated(OutputSerializer), **errors(401, 404)},
        parameters=PAGE_PARAMETERS,
    )
    def get(self, request, slug):
        project, _ = project_for_api(request.user, slug)
        domains = Domain.objects.filter(project=project).order_by("position", "slug")
        return paginate(self, domains, self.OutputSerializer)
