"""REST API of the annotator table (issue 36): each annotator's accuracy on
the project's check items with its Wilson interval and pause, and a
curator's reinstatement (annotate.checks). Curators and admins only."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate import checks
from annotate.api.projects import project_for_api
from annotate.models import Membership
from annotate.projects import CURATOR_ROLES, member_of
from common.api.errors import Conflict, errors
from common.api.paging import PAGE_PARAMETERS, paginate, paginated
from common.body_guard import guard_body


class PauseSerializer(serializers.Serializer):
    paused_at = serializers.DateTimeField()
    reason = serializers.CharField()
    right = serializers.IntegerField(help_text="Checks answered right when paused.")
    total = serializers.IntegerField(help_text="Checks the rule counted when paused.")
    low = serializers.FloatField()
    high = serializers.FloatField()
    threshold = serializers.FloatField()


class AnnotatorChecksSerializer(serializers.Serializer):
    user_id = serializers.IntegerField(source="membership.user_id")
    pseudonym = serializers.CharField(source="membership.pseudonym")
    role = serializers.CharField(source="membership.role")
    is_active = serializers.BooleanField(source="membership.is_active")
    judged = serializers.IntegerField(source="membership.judged")
    checks_right = serializers.IntegerField(source="checks.right")
    checks_total = serializers.IntegerField(
        source="checks.total", help_text="Current votes on check items (n)."
    )
    check_accuracy = serializers.FloatField(
        source="checks.accuracy", allow_null=True, help_text="right / total; null: none yet."
    )
    check_ci_low = serializers.FloatField(
        source="checks.low", help_text="95 % Wilson interval (0 to 1 with no checks)."
    )
    check_ci_high = serializers.FloatField(source="checks.high")
    paused = serializers.BooleanField(source="checks.paused")
    pause = PauseSerializer(source="checks.pause", allow_null=True)


@guard_body(member_of(CURATOR_ROLES))
class AnnotatorsApi(APIView):
    @extend_schema(
        operation_id="annotators_list",
        summary="The annotator table: check accuracy, its 95 % interval, n and pause",
        responses={200: paginated(AnnotatorChecksSerializer), **errors(401, 403, 404)},
        parameters=PAGE_PARAMETERS,
    )
    def get(self, request, slug):
        project, _ = project_for_api(request.user, slug, CURATOR_ROLES)
        return paginate(self, checks.annotator_rows(project), AnnotatorChecksSerializer)


@guard_body(member_of(CURATOR_ROLES))
class ReinstateApi(APIView):
    @extend_schema(
        operation_id="annotators_reinstate",
        summary="Reinstate an annotator the check rule paused (curators)",
        request=None,
        responses={200: AnnotatorChecksSerializer, **errors(401, 403, 404, 409)},
    )
    def post(self, request, slug, user_id):
        project, _ = project_for_api(request.user, slug, CURATOR_ROLES)
        membership = (
            Membership.objects.filter(project=project, user_id=user_id)
            .select_related("user")
            .first()
        )
        if membership is None:
            raise exceptions.NotFound("No such member.")
        try:
            checks.reinstate(actor=request.user, project=project, annotator=membership.user)
        except checks.NotPaused as exc:
            raise Conflict(str(exc), code="not_paused") from None
        row = next(r for r in checks.annotator_rows(project) if r.membership.user_id == user_id)
        return Response(AnnotatorChecksSerializer(row).data)
