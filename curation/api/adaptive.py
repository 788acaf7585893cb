"""/api/v1/projects/<slug>/adaptive/: a project's vote mode, its adaptive
rule in plain words and what the last refit found (curators and admins);
PUT changes the settings (admins), through the same service as the page."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.api.projects import project_for_api
from annotate.loop.adaptive import Rule
from annotate.models import VoteMode
from annotate.models.adaptive import adaptive_summary
from annotate.projects import ADMIN_ROLES, CURATOR_ROLES, member_of
from common.api.errors import Rejected, errors
from common.api.input import validated
from common.body_guard import guard_body
from curation.quality.adaptive import AdaptiveSettingsError, set_vote_mode


class AdaptiveOutput(serializers.Serializer):
    vote_mode = serializers.ChoiceField(choices=VoteMode.choices)
    base_votes = serializers.IntegerField(help_text="Votes every item gets first.")
    budget = serializers.IntegerField(help_text="Most votes an item gets.")
    stop_certainty = serializers.FloatField(
        help_text="An item stops once its label is at least this certain."
    )
    rule = serializers.CharField(help_text="The rule in plain words; empty in fixed mode.")
    posterior = serializers.CharField(help_text="How certainty is estimated.")
    fallback = serializers.BooleanField(
        help_text="True: crowd-kit is missing and the one-coin fallback estimates certainty."
    )
    refitted_at = serializers.DateTimeField(allow_null=True)
    items = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Items per state at the last refit: base, open, certain, agreement, budget.",
    )
    judges = serializers.IntegerField(help_text="Judges counted as extra annotators.")


@guard_body(member_of(ADMIN_ROLES))
class AdaptiveApi(APIView):
    class InputSerializer(serializers.Serializer):
        vote_mode = serializers.ChoiceField(choices=VoteMode.choices)
        # Omitted: the rule's defaults (annotate.loop.adaptive.Rule), as a new project has.
        base_votes = serializers.IntegerField(min_value=1, max_value=50, default=Rule.base_votes)
        budget = serializers.IntegerField(min_value=1, max_value=50, default=Rule.budget)
        stop_certainty = serializers.FloatField(
            min_value=0.5, max_value=1, default=Rule.stop_certainty
        )

    @extend_schema(
        operation_id="adaptive_retrieve",
        summary="A project's vote mode and adaptive rule (curators)",
        responses={200: AdaptiveOutput, **errors(401, 403, 404)},
    )
    def get(self, request, slug):
        project, _ = project_for_api(request.user, slug, CURATOR_ROLES)
        return Response(AdaptiveOutput(adaptive_summary(project)).data)

    @extend_schema(
        operation_id="adaptive_update",
        summary="Change a project's vote mode and adaptive rule (admins)",
        request=InputSerializer,
        responses={200: AdaptiveOutput, **errors(400, 401, 403, 404)},
    )
    def put(self, request, slug):
        project, _ = project_for_api(request.user, slug, ADMIN_ROLES)
        data = validated(self, request)
        try:
            set_vote_mode(project=project, actor=request.user, **data)
        except AdaptiveSettingsError as exc:
            raise Rejected(
                str(exc),
                code="refused",
                fields={f.removeprefix("adaptive_"): [m] for f, m in exc.errors.items()},
            ) from None
        project.refresh_from_db()
        return Response(AdaptiveOutput(adaptive_summary(project)).data)
