"""/api/v1/ endpoints to set a benchmark up: create and change projects and
domains, list/add/change/remove members, create/list/revoke invitations.
One APIView per endpoint with its own serializers, calling
annotate.setup.service as the pages do."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.contrib.auth import get_user_model
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.api.projects import DomainListApi, ProjectListApi, project_for_api
from annotate.projects import member_of
from annotate.setup.service import may_create_projects
from common.api.errors import Conflict, Rejected, errors
from common.api.input import validated
from common.api.paging import PAGE_PARAMETERS, paginate, paginated
from common.api.schema import PREFERENCE_SCALES
from common.body_guard import guard_body, signed_in

from ..importing.roots import project_roots
from ..models import Domain, DomainKind, Membership, PreferenceScale, Role
from ..projects import ADMIN_ROLES
from . import service, team
from .models import Invitation
from .people import member_rows
from .presets import PRESETS
from .vote_mode_api import VoteModeOutput

SCALE_HELP = (
    "ab: A/B (ties per allow_tie); graded6: Multimodal RewardBench 2's six points (A much "
    "better … B much better); graded7: seven points with a tie in the middle. Changeable "
    "only while the project has no votes."
)


@contextmanager
def _refusals() -> Iterator[None]:
    """A setup rule's refusal as a 400 `refused`, naming its field if it has one."""
    try:
        yield
    except service.SetupError as exc:
        fields = {exc.field: [str(exc)]} if exc.field else {}
        raise Rejected(str(exc), code="refused", fields=fields) from None


class ProjectOutput(VoteModeOutput):
    slug = serializers.SlugField()
    name = serializers.CharField()
    description = serializers.CharField()
    guidelines = serializers.CharField(help_text="Markdown.")
    licence = serializers.CharField()
    votes_per_item = serializers.IntegerField()
    escalation_votes = serializers.IntegerField()
    agree_share = serializers.FloatField()
    ranking_least_w = serializers.FloatField(
        help_text="Rankings: the Kendall's W an item needs to be agreed (the rule settings)."
    )
    allow_tie = serializers.BooleanField()
    allow_none_pick = serializers.BooleanField(
        help_text='Best of N: whether "none is acceptable" is an answer (key 0).'
    )
    preference_scale = serializers.ChoiceField(choices=PREFERENCE_SCALES)
    consensus_strength = serializers.FloatField(
        allow_null=True, help_text="The agreement rule's consensus filter (graded); null: off."
    )
    require_rationale = serializers.BooleanField()
    lease_minutes = serializers.IntegerField()
    check_rate = serializers.FloatField(
        help_text="Share of each annotator's items that are check items; 0: checks off."
    )
    check_threshold = serializers.FloatField(
        help_text="An annotator is paused when the upper end of their check accuracy's 95 % "
        "Wilson interval is below this."
    )
    check_minimum = serializers.IntegerField(
        help_text="Checks an annotator answers before the pause rule applies."
    )
    seed = serializers.IntegerField()
    qualification_required = serializers.BooleanField()
    qualification_pass_mark = serializers.FloatField()
    qualification_retry_hours = serializers.IntegerField()
    archived = serializers.SerializerMethodField()

    def get_archived(self, project) -> bool:
        return project.archived_at is not None


# --- Projects ----------------------------------------------------------------------------


# (Comments, not docstrings: the schema would show a serializer's docstring.)
# Every field optional and without a default: a PATCH changes what it names.
class AllOptional:
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            field.required = False
            field.default = serializers.empty


# The settings a project is created with and an admin may change.
class ProjectSettingsInput(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, default="", allow_blank=True)
    guidelines = serializers.CharField(
        required=False, default="", allow_blank=True, help_text="Markdown."
    )
    licence = serializers.CharField(required=False, default="", allow_blank=True, max_length=200)
    allow_tie = serializers.BooleanField(default=True)
    allow_none_pick = serializers.BooleanField(
        default=True,
        help_text='Best-of-N projects: annotators may answer "none is acceptable" (key 0).',
    )
    preference_scale = serializers.ChoiceField(
        choices=PREFERENCE_SCALES, default=PreferenceScale.AB, help_text=SCALE_HELP
    )
    require_rationale = serializers.BooleanField(default=False)
    lease_minutes = serializers.IntegerField(min_value=1, max_value=10_080, default=30)
    check_rate = serializers.FloatField(min_value=0, max_value=1, default=0.0)
    check_threshold = serializers.FloatField(min_value=0, max_value=1, default=0.7)
    check_minimum = serializers.IntegerField(min_value=1, max_value=10_000, default=10)
    seed = serializers.IntegerField(default=0, min_value=-(2**31), max_value=2**31 - 1)
    # Qualification (issue 36): newcomers pass the qualification items first.
    qualification_required = serializers.BooleanField(default=False)
    qualification_pass_mark = serializers.FloatField(default=0.8, min_value=0, max_value=1)
    qualification_retry_hours = serializers.IntegerField(default=24, min_value=0, max_value=8760)


@guard_body(may_create_projects)
class ProjectsApi(ProjectListApi):
    """GET as ProjectListApi; POST creates a project."""

    class InputSerializer(ProjectSettingsInput):
        slug = serializers.SlugField(max_length=80, required=False, default="")
        votes_per_item = serializers.IntegerField(min_value=1, max_value=50, default=3)
        escalation_votes = serializers.IntegerField(
            min_value=0,
            max_value=20,
            default=2,
            help_text="Extra votes asked for an A-vs-B split before it is contested.",
        )
        agree_share = serializers.FloatField(
            min_value=0.51,
            max_value=1.0,
            default=0.8,
            help_text="Winner share at or above which an item is agreed.",
        )
        ranking_least_w = serializers.FloatField(
            min_value=0,
            max_value=1,
            default=0.5,
            help_text="Ranking projects: the Kendall's W an item's rankings need to be agreed.",
        )
        preset = serializers.ChoiceField(
            choices=list(PRESETS),
            default="mrb",
            help_text="Domains to start with: mrb (Multimodal RewardBench's six), vlrb "
            "(VL-RewardBench's three) or empty.",
        )

    class CreatedSerializer(ProjectOutput):
        pass

    @extend_schema(
        operation_id="projects_create",
        summary="Create a project (users allowed to create projects; you become its admin)",
        request=InputSerializer,
        responses={201: CreatedSerializer, **errors(400, 401, 403)},
    )
    def post(self, request):
        if not service.can_create_projects(request.user):
            raise exceptions.PermissionDenied("You may not create projects.")
        data = validated(self, request)
        with _refusals():
            project = service.create_project(actor=request.user, **data)
        return Response(self.CreatedSerializer(project).data, status=status.HTTP_201_CREATED)


@guard_body(member_of(ADMIN_ROLES))
class ProjectDetailApi(APIView):
    class OutputSerializer(ProjectOutput):
        role = serializers.ChoiceField(choices=Role.choices)
        import_roots = serializers.SerializerMethodField(
            help_text="The server folders (IMPORT_ROOTS) the project's admins may import from "
            "by server_path; null unless you administer the project."
        )

        def get_import_roots(self, project) -> list[str] | None:
            return project_roots(project) if project.role in ADMIN_ROLES else None

    class InputSerializer(AllOptional, ProjectSettingsInput):
        archived = serializers.BooleanField(
            required=False,
            help_text="true archives (read-only), false reopens. Votes per item and the "
            "agreement rule change through the rule settings, which re-evaluate verdicts.",
        )
        import_roots = serializers.ListField(
            child=serializers.CharField(max_length=4096),
            required=False,
            max_length=100,
            help_text="Site admins only (403 for anyone else): which of the site's "
            "IMPORT_ROOTS the project may import from; [] turns server paths off.",
        )

    def _out(self, project, role):
        project.role = role
        return self.OutputSerializer(project).data

    @extend_schema(
        operation_id="projects_retrieve",
        summary="One project's settings",
        responses={200: OutputSerializer, **errors(401, 404)},
    )
    def get(self, request, slug):
        project, role = project_for_api(request.user, slug)
        return Response(self._out(project, role))

    @extend_schema(
        operation_id="projects_update",
        summary="Change a project's settings, archive or reopen it (admins)",
        request=InputSerializer,
        responses={200: OutputSerializer, **errors(400, 401, 403, 404)},
    )
    def patch(self, request, slug):
        project, role = project_for_api(request.user, slug, ADMIN_ROLES)
        data = validated(self, request)
        changes = dict(data)
        archived = changes.pop("archived", None)
        roots = changes.pop("import_roots", None)
        if roots is not None and not request.user.is_superuser:
            # Refused before anything else changes (set_import_roots checks too).
            raise exceptions.PermissionDenied("Only site admins choose a project's import roots.")
        with _refusals():
            if roots is not None:
                service.set_import_roots(actor=request.user, project=project, roots=roots)
            if archived is False and project.archived_at is not None:
                service.unarchive_project(actor=request.user, project=project)
            if changes:
                service.update_project(actor=request.user, project=project, **changes)
            if archived and project.archived_at is None:
                service.archive_project(actor=request.user, project=project)
        project.refresh_from_db()
        return Response(self._out(project, role))


# --- Domains -----------------------------------------------------------------------------


class DomainFields(serializers.Serializer):
    slug = serializers.SlugField(max_length=80)
    title = serializers.CharField(max_length=200)
    export_category = serializers.CharField(
        max_length=200, help_text="Written verbatim to each record's Category."
    )
    kind = serializers.ChoiceField(choices=DomainKind.values)
    guidelines = serializers.CharField(required=False, default="", allow_blank=True)
    correctness_question = serializers.CharField(
        required=False,
        default="",
        allow_blank=True,
        max_length=200,
        help_text='Asked of each response; "{response}" becomes A or B (empty: the default).',
    )
    yes_label = serializers.CharField(
        required=False, default="", allow_blank=True, max_length=40, help_text='Empty: "Correct".'
    )
    no_label = serializers.CharField(
        required=False,
        default="",
        allow_blank=True,
        max_length=40,
        help_text='Empty: "Incorrect".',
    )
    asks_grade = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Also ask a letter grade (A, B or C) of each response; fixed once the "
        "domain has votes.",
    )
    grade_question = serializers.CharField(
        required=False,
        default="",
        allow_blank=True,
        max_length=200,
        help_text='"{response}" becomes A or B (empty: the default).',
    )


@guard_body(member_of(ADMIN_ROLES))
class DomainsApi(DomainListApi):
    """GET as DomainListApi; POST adds a domain (admins)."""

    class InputSerializer(DomainFields):
        pass

    class CreatedSerializer(DomainFields):
        pass

    @extend_schema(
        operation_id="domains_create",
        summary="Add a domain (admins)",
        request=InputSerializer,
        responses={201: CreatedSerializer, **errors(400, 401, 403, 404)},
    )
    def post(self, request, slug):
        project, _ = project_for_api(request.user, slug, ADMIN_ROLES)
        data = validated(self, request)
        with _refusals():
            domain = service.add_domain(actor=request.user, project=project, **data)
        return Response(self.CreatedSerializer(domain).data, status=status.HTTP_201_CREATED)


@guard_body(member_of(ADMIN_ROLES))
class DomainDetailApi(APIView):
    class InputSerializer(AllOptional, DomainFields):
        pass

    class OutputSerializer(DomainFields):
        pass

    @extend_schema(
        operation_id="domains_update",
        summary="Rename, retitle or re-word a domain (admins); its slug and export "
        "Category string only while no release uses it",
        request=InputSerializer,
        responses={200: OutputSerializer, **errors(400, 401, 403, 404)},
    )
    def patch(self, request, slug, domain_slug):
        project, _ = project_for_api(request.user, slug, ADMIN_ROLES)
        domain = Domain.objects.filter(project=project, slug=domain_slug).first()
        if domain is None:
            raise exceptions.NotFound("No such domain.")
        data = validated(self, request, partial=True)
        with _refusals():
            service.update_domain(actor=request.user, domain=domain, **data)
        domain.refresh_from_db()
        return Response(self.OutputSerializer(domain).data)


# --- Members -----------------------------------------------------------------------------


class MemberOutput(serializers.Serializer):
    user_id = serializers.IntegerField(source="membership.user_id")
    username = serializers.CharField(source="membership.user.username")
    email = serializers.CharField(source="membership.user.email")
    pseudonym = serializers.CharField(source="membership.pseudonym")
    role = serializers.ChoiceField(choices=Role.choices, source="membership.role")
    is_active = serializers.BooleanField(source="membership.is_active")
    judged = serializers.IntegerField()
    last_active = serializers.DateTimeField(allow_null=True)
    agreement_with_majority = serializers.FloatField(
        source="agreement",
        allow_null=True,
        help_text="Share of current votes matching the plurality of the other votes on the "
        "item (null: no comparable vote).",
    )


def _member_row(project, user_id):
    return next(r for r in member_rows(project) if r.membership.user_id == user_id)


@guard_body(member_of(ADMIN_ROLES))
class MembersApi(APIView):
    class InputSerializer(serializers.Serializer):
        username = serializers.CharField(max_length=150)
        role = serializers.ChoiceField(choices=Role.choices, default=Role.ANNOTATOR)

    class OutputSerializer(MemberOutput):
        pass

    @extend_schema(
        operation_id="members_list",
        summary="The project's members with their figures (admins)",
        responses={200: paginated(OutputSerializer), **errors(401, 403, 404)},
        parameters=PAGE_PARAMETERS,
    )
    def get(self, request, slug):
        project, _ = project_for_api(request.user, slug, ADMIN_ROLES)
        return paginate(self, member_rows(project), self.OutputSerializer)

    @extend_schema(
        operation_id="members_add",
        summary="Add an existing user with a role (admins)",
        request=InputSerializer,
        responses={201: OutputSerializer, **errors(400, 401, 403, 404)},
    )
    def post(self, request, slug):
        project, _ = project_for_api(request.user, slug, ADMIN_ROLES)
        data = validated(self, request)
        user = get_user_model().objects.filter(username__iexact=data["username"]).first()
        if user is None:
            raise Rejected(
                "No such user; invite them with a link.",
                fields={"username": [f"No account {data['username']!r}."]},
            )
        with _refusals():
            team.add_member(actor=request.user, project=project, user=user, role=data["role"])
        out = self.OutputSerializer(_member_row(project, user.pk)).data
        return Response(out, status=status.HTTP_201_CREATED)


@guard_body(member_of(ADMIN_ROLES))
class MemberDetailApi(APIView):
    class InputSerializer(serializers.Serializer):
        role = serializers.ChoiceField(choices=Role.choices, required=False)
        is_active = serializers.BooleanField(
            required=False,
            help_text="false deactivates (open leases return to the pool; votes stay).",
        )

    class OutputSerializer(MemberOutput):
        pass

    def _user(self, project, user_id):
        membership = (
            Membership.objects.filter(project=project, user_id=user_id)
            .select_related("user")
            .first()
        )
        if membership is None:
            raise exceptions.NotFound("No such member.")
        return membership.user

    @extend_schema(
        operation_id="members_update",
        summary="Change a member's role, deactivate or reactivate them (admins)",
        request=InputSerializer,
        responses={200: OutputSerializer, **errors(400, 401, 403, 404)},
    )
    def patch(self, request, slug, user_id):
        project, _ = project_for_api(request.user, slug, ADMIN_ROLES)
        user = self._user(project, user_id)
        data = validated(self, request)
        membership = Membership.objects.get(project=project, user=user)
        with _refusals():
            if data.get("is_active") is True and not membership.is_active:
                team.reactivate_member(actor=request.user, project=project, user=user)
            if "role" in data:
                team.change_member_role(
                    actor=request.user, project=project, user=user, role=data["role"]
                )
            if data.get("is_active") is False and membership.is_active:
                team.deactivate_member(actor=request.user, project=project, user=user)
        return Response(self.OutputSerializer(_member_row(project, user.pk)).data)

    @extend_schema(
        operation_id="members_remove",
        summary="Remove a member who never voted (admins); a voter is deactivated instead",
        responses={204: None, **errors(401, 403, 404, 409)},
    )
    def delete(self, request, slug, user_id):
        project, _ = project_for_api(request.user, slug, ADMIN_ROLES)
        user = self._user(project, user_id)
        try:
            team.remove_member(actor=request.user, project=project, user=user)
        except service.SetupError as exc:
            raise Conflict(str(exc)) from None
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- Invitations -------------------------------------------------------------------------


class InvitationOutput(serializers.Serializer):
    id = serializers.IntegerField()
    role = serializers.ChoiceField(choices=Role.choices)
    max_uses = serializers.IntegerField(allow_null=True, help_text="null: any number.")
    uses = serializers.IntegerField()
    expires_at = serializers.DateTimeField()
    note = serializers.CharField()
    state = serializers.ChoiceField(choices=["open", "expired", "used", "revoked"])


@guard_body(member_of(ADMIN_ROLES))
class InvitationsApi(APIView):
    class InputSerializer(serializers.Serializer):
        role = serializers.ChoiceField(choices=Role.choices, default=Role.ANNOTATOR)
        max_uses = serializers.IntegerField(
            min_value=1,
            max_value=10_000,
            allow_null=True,
            default=1,
            help_text="1: a one-time link (default); null: anyone until it expires.",
        )
        expires_in_days = serializers.IntegerField(
            min_value=1, max_value=team.INVITATION_DAYS_MAX, default=7
        )
        note = serializers.CharField(required=False, default="", allow_blank=True, max_length=200)

    class OutputSerializer(InvitationOutput):
        pass

    class CreatedSerializer(InvitationOutput):
        url = serializers.URLField(
            help_text="The link to send; shown only in this answer (only a digest is stored)."
        )

    @extend_schema(
        operation_id="invitations_list",
        summary="The project's invitations (admins); links are not shown again",
        responses={200: paginated(OutputSerializer), **errors(401, 403, 404)},
        parameters=PAGE_PARAMETERS,
    )
    def get(self, request, slug):
        project, _ = project_for_api(request.user, slug, ADMIN_ROLES)
        invitations = Invitation.objects.filter(project=project).order_by("-created_at", "-id")
        return paginate(self, invitations, self.OutputSerializer)

    @extend_schema(
        operation_id="invitations_create",
        summary="Create an invitation link (admins)",
        request=InputSerializer,
        responses={201: CreatedSerializer, **errors(400, 401, 403, 404)},
    )
    def post(self, request, slug):
        project, _ = project_for_api(request.user, slug, ADMIN_ROLES)
        data = validated(self, request)
        with _refusals():
            new = team.create_invitation(actor=request.user, project=project, **data)
        invitation = new.invitation
        invitation.url = request.build_absolute_uri(new.path)
        return Response(self.CreatedSerializer(invitation).data, status=status.HTTP_201_CREATED)


@guard_body(member_of(ADMIN_ROLES))
class InvitationDetailApi(APIView):
    @extend_schema(
        operation_id="invitations_revoke",
        summary="Revoke an invitation (admins): its link stops working",
        responses={204: None, **errors(401, 403, 404, 409)},
    )
    def delete(self, request, slug, invitation_id):
        project, _ = project_for_api(request.user, slug, ADMIN_ROLES)
        invitation = get_object_or_404(Invitation, project=project, pk=invitation_id)
        try:
            team.revoke_invitation(actor=request.user, invitation=invitation)
        except service.SetupError as exc:
            raise Conflict(str(exc)) from None
        return Response(status=status.HTTP_204_NO_CONTENT)


@guard_body(signed_in)
class InvitationAcceptApi(APIView):
    """For a person who already has an account (and a token): join the
    project an invitation link names. Newcomers sign up on the link's page."""

    class InputSerializer(serializers.Serializer):
        token = serializers.CharField(
            max_length=200, help_text="The last part of the link (…/join/<token>/)."
        )

    class OutputSerializer(serializers.Serializer):
        project = serializers.SlugField(source="project.slug")
        role = serializers.ChoiceField(choices=Role.choices)

    @extend_schema(
        operation_id="invitations_accept",
        summary="Join a project with an invitation token",
        request=InputSerializer,
        responses={200: OutputSerializer, **errors(400, 401)},
    )
    def post(self, request):
        if not request.user.is_authenticated:
            raise exceptions.NotAuthenticated()
        data = validated(self, request)
        try:
            membership = team.accept_invitation(token=data["token"], user=request.user)
        except service.SetupError as exc:
            raise Rejected(str(exc), code="invitation_invalid") from None
        return Response(self.OutputSerializer(membership).data)
