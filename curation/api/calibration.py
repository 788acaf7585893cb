"""REST API of calibrated judges (issue 36 item 3), for curators: judge runs
over a project's benchmark items (list, start; a run's progress, cancel and
resume are the judge runs' own endpoints) and the calibration report per
judge and domain against the human majority."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.projects import CURATOR_ROLES, member_of
from common.api.errors import Rejected, errors
from common.api.input import validated
from common.api.paging import PAGE_PARAMETERS, paginate, paginated
from common.body_guard import guard_body
from curation.api.access import curated_project
from curation.api.judges import JudgeRunSerializer, run_endpoint
from curation.evaluation.calibration_report import calibration_for, project_runs
from curation.evaluation.project_judging import ProjectJudgeError, start_project_judge_run


@guard_body(member_of(CURATOR_ROLES))
class ProjectJudgeRunListApi(APIView):
    class InputSerializer(serializers.Serializer):
        endpoint = serializers.IntegerField(help_text="A judge endpoint of this project.")
        name = serializers.CharField(max_length=120, help_text="Its name in the report.")
        scoring = serializers.CharField(
            required=False,
            allow_null=True,
            default=None,
            help_text="Each item is judged by the benchmark its domain belongs to; a key "
            "given here must be one of them (it names the run).",
        )
        concurrency = serializers.IntegerField(
            required=False, default=4, min_value=1, help_text="Requests in flight at once."
        )

    @extend_schema(
        operation_id="project_judge_runs_list",
        summary="Judge runs over this project's benchmark items, newest first",
        responses={200: paginated(JudgeRunSerializer), **errors(401, 403, 404)},
        parameters=PAGE_PARAMETERS,
    )
    def get(self, request, slug):
        project = curated_project(request, slug)
        return paginate(
            self, project_runs(project).order_by("-created_at", "-pk"), JudgeRunSerializer
        )

    @extend_schema(
        operation_id="project_judge_runs_create",
        summary="Judge this project's benchmark items in both orders (queued in the background)",
        request=InputSerializer,
        responses={202: JudgeRunSerializer, **errors(400, 401, 403, 404)},
    )
    def post(self, request, slug):
        project = curated_project(request, slug)
        data = validated(self, request)
        endpoint = run_endpoint(project, data)
        try:
            run = start_project_judge_run(
                project=project,
                endpoint=endpoint,
                name=data["name"],
                scoring=data["scoring"],
                concurrency=data["concurrency"],
                user=request.user,
            )
        except ProjectJudgeError as exc:
            raise Rejected(str(exc), code="run_refused") from None
        return Response(JudgeRunSerializer(run).data, status=202)


class CalibrationRowSerializer(serializers.Serializer):
    domain = serializers.CharField(allow_null=True, help_text="null: all domains.")
    n_items = serializers.IntegerField(help_text="Benchmark items with human votes.")
    n_majority = serializers.IntegerField(help_text="Of those, with a human majority.")
    n_tie_or_split = serializers.IntegerField(help_text="Left out: top answer a tie, or shared.")
    n_too_few_votes = serializers.IntegerField(help_text="Left out: fewer votes than needed.")
    n_judged = serializers.IntegerField(help_text="Majority items the judge answered.")
    n_votes = serializers.IntegerField(help_text="Judge votes (item, order) scored.")
    n_unparsed = serializers.IntegerField(help_text="Judge answers without a verdict.")
    accuracy = serializers.FloatField(allow_null=True)
    kappa = serializers.FloatField(allow_null=True, help_text="Cohen's kappa with the majority.")
    n_both_orders = serializers.IntegerField()
    position_consistency = serializers.FloatField(allow_null=True)
    n_with_confidence = serializers.IntegerField()
    ece = serializers.FloatField(allow_null=True, help_text="null: no confidence given.")
    n_cases = serializers.IntegerField(help_text="Leave-one-out stand-in cases.")
    judge_standin_agreement = serializers.FloatField(allow_null=True)
    human_loo_median = serializers.FloatField(allow_null=True)
    n_humans_measured = serializers.IntegerField()
    can_stand_in = serializers.BooleanField(allow_null=True, help_text="null: not enough data.")
    verdict = serializers.CharField(help_text="The answer in words.")


class CalibrationSerializer(serializers.Serializer):
    run = JudgeRunSerializer()
    rows = CalibrationRowSerializer(many=True)


class CalibrationApi(APIView):
    @extend_schema(
        operation_id="calibration_retrieve",
        summary="Calibration of each project judge run against the human majority, per domain",
        responses={200: CalibrationSerializer(many=True), **errors(401, 403, 404)},
    )
    def get(self, request, slug):
        project = curated_project(request, slug)
        return Response(CalibrationSerializer(calibration_for(project), many=True).data)
