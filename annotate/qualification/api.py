"""The qualification's REST endpoints (issue 36 item 1): a member's own
status, and for curators every annotator's admission and attempts and the
manual admission. Answers are given on the pages (the compare page)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.api.projects import project_for_api
from annotate.models import Membership, Role
from annotate.projects import CURATOR_ROLES, member_of
from annotate.qualification.service import (
    admit_member,
    attempts_by_member,
    qualification_items,
    qualification_status,
)
from common.api.errors import errors
from common.api.input import validated
from common.body_guard import guard_body


class AttemptOutput(serializers.Serializer):
    id = serializers.IntegerField()
    started_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True, help_text="null: still open.")
    right = serializers.IntegerField()
    total = serializers.IntegerField()
    pass_mark = serializers.FloatField()
    passed = serializers.BooleanField()


class StatusOutput(serializers.Serializer):
    required = serializers.BooleanField(help_text="Whether you must qualify in this project.")
    admitted = serializers.BooleanField(help_text="Whether you may get benchmark items.")
    admitted_at = serializers.DateTimeField(allow_null=True)
    admitted_by_curator = serializers.BooleanField(source="manual")
    pass_mark = serializers.FloatField()
    retry_hours = serializers.IntegerField()
    items = serializers.IntegerField(source="n_items")
    retry_at = serializers.DateTimeField(
        allow_null=True, help_text="When a failed attempt may be retried (null: no wait)."
    )
    can_start = serializers.BooleanField()
    attempts = AttemptOutput(many=True)


class QualificationStatusApi(APIView):
    @extend_schema(
        operation_id="qualification_status",
        summary="Your qualification in a project: admitted, attempts, when to retry",
        responses={200: StatusOutput, **errors(401, 404)},
    )
    def get(self, request, slug):
        project, _ = project_for_api(request.user, slug)
        status = qualification_status(project=project, user=request.user)
        out = {
            **status.__dict__,
            "can_start": status.can_start,
            "pass_mark": project.qualification_pass_mark,
            "retry_hours": project.qualification_retry_hours,
        }
        return Response(StatusOutput(out).data)


class AnnotatorOutput(serializers.Serializer):
    user_id = serializers.IntegerField()
    username = serializers.CharField()
    pseudonym = serializers.CharField()
    admitted_at = serializers.DateTimeField(allow_null=True)
    admitted_by = serializers.CharField(
        allow_null=True, help_text="The curator who admitted them by hand (null: passed, or not)."
    )
    attempts = AttemptOutput(many=True)


class QualificationAnnotatorsOutput(serializers.Serializer):
    required = serializers.BooleanField()
    items = serializers.IntegerField()
    annotators = AnnotatorOutput(many=True)


def _annotators(project) -> list[dict]:
    attempts = attempts_by_member(project)
    members = (
        Membership.objects.filter(project=project, role=Role.ANNOTATOR)
        .select_related("user", "admitted_by")
        .order_by("pseudonym", "user_id")
    )
    return [
        {
            "user_id": m.user_id,
            "username": m.user.get_username(),
            "pseudonym": m.pseudonym,
            "admitted_at": m.admitted_at,
            "admitted_by": m.admitted_by.get_username() if m.admitted_by else None,
            "attempts": attempts.get(m.user_id, []),
        }
        for m in members
    ]


class QualificationAnnotatorsApi(APIView):
    @extend_schema(
        operation_id="qualification_annotators",
        summary="Every annotator's admission and qualification attempts (curators)",
        responses={200: QualificationAnnotatorsOutput, **errors(401, 403, 404)},
    )
    def get(self, request, slug):
        project, _ = project_for_api(request.user, slug, CURATOR_ROLES)
        out = {
            "required": project.qualification_required,
            "items": qualification_items(project).count(),
            "annotators": _annotators(project),
        }
        return Response(QualificationAnnotatorsOutput(out).data)


@guard_body(member_of(CURATOR_ROLES))
class QualificationAdmitApi(APIView):
    class InputSerializer(serializers.Serializer):
        user_id = serializers.IntegerField(min_value=1, max_value=2**31 - 1)
        reason = serializers.CharField(max_length=500, required=False, default="", allow_blank=True)

    @extend_schema(
        operation_id="qualification_admit",
        summary="Admit an annotator without qualification (curators; audited)",
        request=InputSerializer,
        responses={200: AnnotatorOutput, **errors(400, 401, 403, 404)},
    )
    def post(self, request, slug):
        project, _ = project_for_api(request.user, slug, CURATOR_ROLES)
        data = validated(self, request)
        user_id = data["user_id"]
        if not Membership.objects.filter(project=project, user_id=user_id, role=Role.ANNOTATOR):
            raise exceptions.NotFound("No such annotator.")
        admit_member(
            project=project,
            user_id=user_id,
            actor=request.user,
            reason=data["reason"],
        )
        row = next(r for r in _annotators(project) if r["user_id"] == user_id)
        return Response(AnnotatorOutput(row).data)
