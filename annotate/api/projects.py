"""REST API: who may see a project, and the project and domain lists."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers
from rest_framework.views import APIView

from annotate.models import Domain, Project, Role
from common.api.errors import errors
from common.api.paging import PAGE_PARAMETERS, paginate, paginated
from common.api.schema import PREFERENCE_SCALES

# --- Access -------------------------------------------------------------------------------


def project_for_api(user, slug: str, roles: tuple[str, ...] | None = None) -> tuple[Project, str]:
    """annotate.projects.project_for with the API's errors: the project and
    the user's role in it, in one query; 404 if they do not see it (its
    existence is not revealed), 403 if their role is not one of `roles`."""
    project = Project.objects.visible_to(user).filter(slug=slug).first()
    if project is None:
        raise exceptions.NotFound("No such project.")
    role: str = project.member_role  # type: ignore[attr-defined]  # (visible_to's)
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
        preference_scale = serializers.ChoiceField(
            choices=PREFERENCE_SCALES,
            help_text="ab: A/B(/tie); graded6 / graded7: a graded scale (send `strength`).",
        )
        require_rationale = serializers.BooleanField()

    @extend_schema(
        operation_id="projects_list",
        summary="Projects you are a member of, with your role",
        responses={200: paginated(OutputSerializer), **errors(401, 404)},
        parameters=PAGE_PARAMETERS,
    )
    def get(self, request):
        projects = Project.objects.visible_to(request.user)
        return paginate(self, projects.order_by("name", "pk"), self.OutputSerializer)


class DomainListApi(APIView):
    class OutputSerializer(serializers.Serializer):
        slug = serializers.SlugField()
        title = serializers.CharField()
        export_category = serializers.CharField(help_text="The release's Category string.")
        kind = serializers.ChoiceField(choices=["correctness", "preference"])
        guidelines = serializers.CharField(help_text="Markdown.")
        asks_grade = serializers.BooleanField(
            help_text="Judgements also grade each response A, B or C."
        )

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
