"""REST API of evaluations (/api/v1/): predictions uploaded and scored against a
ready release (the leaderboard), and one evaluation's report
(curation.evaluation.service).
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import exceptions, serializers
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from common.api.errors import PayloadTooLarge, Rejected, errors
from common.api.paging import PAGE_PARAMETERS, paginate, paginated
from curation.api.access import curated_project
from curation.api.releases import release_for
from curation.evaluation.service import MAX_PREDICTIONS_BYTES, EvaluationError, evaluate_release
from curation.models import (
    Evaluation,
)


class EvaluationSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    accuracy = serializers.FloatField(allow_null=True, help_text="Official overall accuracy.")
    created_by = serializers.CharField(source="created_by.username", allow_null=True)
    created_at = serializers.DateTimeField()


class GroupSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="all, a Category, or a sub-bucket (reasoning/math).")
    level = serializers.CharField()
    correct = serializers.IntegerField()
    total = serializers.IntegerField()
    accuracy = serializers.FloatField(allow_null=True)


class EvaluationDetailSerializer(EvaluationSerializer):
    release = serializers.IntegerField(source="release_id")
    per_category = serializers.SerializerMethodField(
        help_text="The official scorer's table: overall, per Category, per sub-bucket."
    )
    extras = serializers.SerializerMethodField(
        help_text="Not part of the official score: macro average, 95% CIs, coverage, "
        "position bias and consistency."
    )

    @extend_schema_field(GroupSerializer(many=True))
    def get_per_category(self, evaluation) -> list:
        return evaluation.report.get("official", {}).get("groups", [])

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_extras(self, evaluation) -> dict:
        return evaluation.report.get("extras", {})


class EvaluationListApi(APIView):
    parser_classes = [MultiPartParser]

    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=120, help_text="The model or judge evaluated.")
        predictions = serializers.FileField(
            help_text="JSONL: ID with judge text (output), Label (A/B), score_1/score_2, or "
            "chosen_score/rejected_score."
        )
        swapped = serializers.FileField(
            required=False, help_text="Optional: the same model with the order swapped."
        )
        official_compat = serializers.BooleanField(
            required=False,
            default=False,
            help_text="Score lines whose ID is not in the release against the Label they "
            "carry (in their Meta.Category), as the official script does; by default they "
            "are listed as unknown IDs and not scored.",
        )

    @extend_schema(
        operation_id="evaluations_list",
        summary="Evaluations scored against this release (the leaderboard)",
        responses={200: paginated(EvaluationSerializer), **errors(401, 403, 404)},
        parameters=PAGE_PARAMETERS,
    )
    def get(self, request, slug, release_id):
        project = curated_project(request, slug)
        release = release_for(project, release_id)
        evaluations = Evaluation.objects.filter(release=release).select_related("created_by")
        ordered = evaluations.order_by("-accuracy", "name", "pk")
        return paginate(self, ordered, EvaluationSerializer)

    @extend_schema(
        operation_id="evaluations_create",
        summary="Upload predictions for a ready release and score them",
        request={"multipart/form-data": InputSerializer},
        responses={201: EvaluationDetailSerializer, **errors(400, 401, 403, 404, 413)},
    )
    def post(self, request, slug, release_id):
        project = curated_project(request, slug)
        release = release_for(project, release_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        for upload in (data["predictions"], data.get("swapped")):
            if upload is not None and upload.size > MAX_PREDICTIONS_BYTES:
                raise PayloadTooLarge(f"{upload.name}: larger than {MAX_PREDICTIONS_BYTES} bytes.")
        swapped = data.get("swapped")
        try:
            evaluation = evaluate_release(
                release=release,
                name=data["name"],
                predictions=data["predictions"],
                filename=data["predictions"].name,
                swapped=swapped or None,
                swapped_filename=swapped.name if swapped else "",
                user=request.user,
                official_compat=data["official_compat"],
            )
        except EvaluationError as exc:
            raise Rejected(str(exc), code="evaluation_refused") from None
        return Response(EvaluationDetailSerializer(evaluation).data, status=201)


class EvaluationDetailApi(APIView):
    @extend_schema(
        operation_id="evaluations_retrieve",
        summary="An evaluation with its per-category accuracies",
        responses={200: EvaluationDetailSerializer, **errors(401, 403, 404)},
    )
    def get(self, request, slug, release_id, evaluation_id):
        project = curated_project(request, slug)
        release = release_for(project, release_id)
        evaluation = (
            Evaluation.objects.filter(release=release, pk=evaluation_id)
            .select_related("created_by")
            .first()
        )
        if evaluation is None:
            raise exceptions.NotFound("No such evaluation.")
        return Response(EvaluationDetailSerializer(evaluation).data)
