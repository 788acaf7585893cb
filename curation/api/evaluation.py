"""REST API of evaluations (/api/v1/): predictions uploaded and scored against a
ready release (the leaderboard), and one evaluation's report
(curation.evaluation.service).
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import exceptions, serializers
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.projects import CURATOR_ROLES, member_of
from common.api.errors import PayloadTooLarge, Rejected, errors
from common.api.input import validated
from common.api.paging import PAGE_PARAMETERS, paginate, paginated
from common.body_guard import guard_body
from curation.api.access import curated_project
from curation.api.releases import release_for
from curation.benchmarks import registry
from curation.evaluation.service import MAX_PREDICTIONS_BYTES, EvaluationError, evaluate_upload
from curation.models import (
    Evaluation,
)


class ReportValue(serializers.Field):
    """A read-only value of an evaluation's stored report, as a benchmark
    reads it (base.ApiField, base.ApiReport), described in the schema by
    the benchmark's own field; null where the report has none."""

    def __init__(self, read, schema, **kwargs):
        self.read = read
        super().__init__(read_only=True, **kwargs)
        extend_schema_field(schema)(self)

    def get_attribute(self, evaluation):
        return self.read(evaluation.report)

    def to_representation(self, value):
        return value


# An evaluation, and the fields its benchmarks show of their reports
# (Benchmark.api_fields); the detail adds the release, their detail fields
# and each benchmark's own report section (Benchmark.api_report). Comments,
# not docstrings: a serializer's docstring would become the schema's text.
class EvaluationSerializer(serializers.Serializer):
    detail = False

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

    def get_fields(self):
        fields = super().get_fields()
        benchmark_fields = [
            (name, spec)
            for benchmark in registry.offering("api_fields")
            for name, spec in benchmark.api_fields().items()
        ]
        for name, spec in benchmark_fields:
            if not spec.detail:
                fields[name] = ReportValue(spec.read, spec.schema, help_text=spec.help_text)
        if not self.detail:
            return fields
        fields["release"] = serializers.IntegerField(source="release_id")
        for name, spec in benchmark_fields:
            if spec.detail:
                fields[name] = ReportValue(spec.read, spec.schema, help_text=spec.help_text)
        for benchmark in registry.offering("api_report"):
            report = benchmark.api_report
            fields[benchmark.key] = ReportValue(
                lambda r, key=benchmark.key: r.get(key),
                report.serializer(allow_null=True),
                help_text=report.help_text,
            )
        return fields


class EvaluationDetailSerializer(EvaluationSerializer):
    detail = True


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
        data = validated(self, request)
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
