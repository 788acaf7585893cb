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
from curation.evaluation.calibration_cache import request_refresh, stored_report
from curation.evaluation.calibration_report import project_runs
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


class CalibrationRunSerializer(serializers.Serializer):
    run = JudgeRunSerializer()
    rows = CalibrationRowSerializer(many=True)


class CalibrationSerializer(serializers.Serializer):
    computed_at = serializers.DateTimeField(
        allow_null=True, source="cache.computed_at", help_text="null: never computed yet."
    )
    n_votes = serializers.IntegerField(
        source="cache.n_votes", help_text="Human votes the stored report was computed from."
    )
    votes_since = serializers.IntegerField(
        help_text="Human votes given, revised or withdrawn since it was computed."
    )
    computing = serializers.BooleanField(help_text="A computation is queued or running.")
    progress = serializers.IntegerField(
        source="cache.progress_percent", help_text="Percent of the running computation."
    )
    error = serializers.CharField(
        source="cache.error", help_text='Why the last computation failed ("" if it did not).'
    )
    runs = CalibrationRunSerializer(
        many=True, source="reports", help_text="Per project judge run with votes, by name."
    )


class CalibrationApi(APIView):
    @extend_schema(
        operation_id="calibration_retrieve",
        summary="The stored calibration of each project judge run against the human majority, "
        "per domain (computed in the background; queued when votes changed enough)",
        responses={200: CalibrationSerializer, **errors(401, 403, 404)},
    )
    def get(self, request, slug):
        project = curated_project(request, slug)
        stored = stored_report(project, list(project_runs(project)))
        return Response(CalibrationSerializer(stored).data)


@guard_body(member_of(CURATOR_ROLES))
class CalibrationRefreshApi(APIView):
    class OutputSerializer(serializers.Serializer):
        queued = serializers.BooleanField(
            help_text="False when a computation was already queued or running (it is run "
            "once more when it ends)."
        )

    @extend_schema(
        operation_id="calibration_refresh",
        summary="Recompute the calibration report in the background",
        request=None,
        responses={202: OutputSerializer, **errors(401, 403, 404)},
    )
    def post(self, request, slug):
        project = curated_project(request, slug)
        queued = request_refresh(project=project)
        return Response(self.OutputSerializer({"queued": queued}).data, status=202)
