"""REST API of evaluations (/api/v1/): predictions uploaded and scored against a
ready release (the leaderboard), and one evaluation's report
(curation.evaluation.service).
"""

from __future__ import annotations

import functools

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import exceptions, serializers
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.projects import CURATOR_ROLES, member_of
from common.api.errors import PayloadTooLarge, Rejected, errors
from common.api.paging import PAGE_PARAMETERS, paginate, paginated
from common.body_guard import guard_body
from curation.api.access import curated_project
from curation.api.releases import release_for
from curation.benchmarks import registry
from curation.evaluation.service import MAX_PREDICTIONS_BYTES, EvaluationError, evaluate_upload
from curation.models import (
    Evaluation,
)


class MacroAverageSerializer(serializers.Serializer):
    value = serializers.FloatField(allow_null=True)
    ci95 = serializers.ListField(
        child=serializers.FloatField(), allow_null=True, help_text="[low, high]"
    )


class EvaluationSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    accuracy = serializers.FloatField(
        allow_null=True,
        help_text="Official overall accuracy, by the benchmark's rules (Multimodal RewardBench "
        "2: all correct / all judgements evaluated).",
    )
    scoring = serializers.CharField(
        help_text=registry.described(
            lambda benchmarks: " or ".join(f"{b.key} ({b.title} rules)" for b in benchmarks) + "."
        )
    )
    created_by = serializers.CharField(source="created_by.username", allow_null=True)
    created_at = serializers.DateTimeField()
    accuracy_ci95 = serializers.SerializerMethodField(
        help_text="Extra: Wilson 95% interval [low, high] of the overall accuracy (null: "
        "none, e.g. Multimodal RewardBench 2)."
    )
    macro_average = serializers.SerializerMethodField(
        help_text="Extra: the mean of the per-Category accuracies and its stratified "
        "bootstrap 95% interval: {value, ci95: [low, high]} (null for Multimodal "
        "RewardBench 2)."
    )
    missing_ids = serializers.SerializerMethodField(
        help_text="Extra: release items without a prediction."
    )
    unknown_ids = serializers.SerializerMethodField(
        help_text="Extra: prediction lines whose ID is not in the release."
    )

    @extend_schema_field(serializers.ListField(child=serializers.FloatField(), allow_null=True))
    def get_accuracy_ci95(self, evaluation):
        return evaluation.report.get("extras", {}).get("ci95", {}).get("all")

    @extend_schema_field(MacroAverageSerializer(allow_null=True))
    def get_macro_average(self, evaluation):
        macro = evaluation.report.get("extras", {}).get("macro_average")
        return {"value": macro.get("value"), "ci95": macro.get("ci95")} if macro else None

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_missing_ids(self, evaluation):
        coverage = evaluation.report.get("extras", {}).get("coverage")
        return len(coverage.get("missing", [])) if coverage else None

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_unknown_ids(self, evaluation):
        coverage = evaluation.report.get("extras", {}).get("coverage")
        return len(coverage.get("unknown", [])) if coverage else None


class GroupSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="all, a Category, or a sub-bucket (reasoning/math).")
    level = serializers.CharField()
    correct = serializers.IntegerField()
    total = serializers.IntegerField()
    accuracy = serializers.FloatField(allow_null=True)


class ReportSection(serializers.Field):
    """A benchmark's own section of an evaluation's report (report[key]), as
    stored; null for the other benchmarks' evaluations."""

    def __init__(self, key: str, **kwargs):
        self.key = key
        super().__init__(read_only=True, **kwargs)

    def get_attribute(self, evaluation):
        return evaluation.report.get(self.key)

    def to_representation(self, value):
        return value


@functools.cache
def _section_class(benchmark) -> type[ReportSection]:
    """A ReportSection described in the schema by the benchmark's serializer."""
    serializer = benchmark.api_report.serializer
    return extend_schema_field(serializer(allow_null=True))(
        type(f"{serializer.__name__}Section", (ReportSection,), {})
    )


class EvaluationDetailSerializer(EvaluationSerializer):
    release = serializers.IntegerField(source="release_id")
    per_category = serializers.SerializerMethodField(
        help_text="The official scorer's table: overall, per Category, per sub-bucket."
    )
    extras = serializers.SerializerMethodField(
        help_text="Not part of the official score: macro average, 95% CIs, coverage, "
        "position bias and consistency."
    )

    def get_fields(self):
        """Then one field per benchmark whose report has a section of its own
        (Benchmark.api_report), named by its key."""
        fields = super().get_fields()
        for benchmark in registry.offering("api_report"):
            section = _section_class(benchmark)
            fields[benchmark.key] = section(benchmark.key, help_text=benchmark.api_report.help_text)
        return fields

    @extend_schema_field(GroupSerializer(many=True))
    def get_per_category(self, evaluation) -> list:
        return evaluation.report.get("official", {}).get("groups", [])

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_extras(self, evaluation) -> dict:
        return evaluation.report.get("extras", {})


@guard_body(member_of(CURATOR_ROLES), uploads=True)
class EvaluationListApi(APIView):
    parser_classes = [MultiPartParser]

    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=120, help_text="The model or judge evaluated.")
        predictions = serializers.FileField(
            help_text=registry.described(
                lambda benchmarks: " ".join(b.upload_help for b in benchmarks)
            )
        )
        predictions_format = serializers.CharField(
            required=False,
            default="auto",
            help_text=registry.described(
                lambda benchmarks: (
                    "auto: from the file's shape (each benchmark recognises "
                    "its own); else a benchmark's key ("
                    + ", ".join(b.key for b in benchmarks)
                    + ": curation.benchmarks), which scores against that benchmark's files in "
                    "the release."
                )
            ),
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
            evaluation = evaluate_upload(
                release=release,
                name=data["name"],
                predictions=data["predictions"],
                filename=data["predictions"].name,
                fmt=data["predictions_format"],
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
