"""REST API of the judge runner (/api/v1/): a project's judge endpoints
(listed for curators, created by admins; the API key is write-only and never
returned) and judge runs over a ready release (start, progress, cancel,
resume), through the services the pages use (curation.evaluation.judge_runs).
"""

from __future__ import annotations

from django.db.models import Q
from django.http import QueryDict
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.api.projects import project_for_api
from annotate.projects import ADMIN_ROLES, CURATOR_ROLES, member_of
from common.api.errors import Conflict, Rejected, errors
from common.api.input import validated
from common.api.paging import PAGE_PARAMETERS, paginate, paginated
from common.body_guard import guard_body
from curation.api.access import curated_project
from curation.api.releases import release_for
from curation.benchmarks import registry
from curation.evaluation import media_content
from curation.evaluation.forms import JudgeEndpointForm
from curation.evaluation.judge_runs import (
    JudgeRunError,
    cancel_judge_run,
    is_stale,
    max_concurrency,
    resume_judge_run,
    save_endpoint,
    start_judge_run,
)
from curation.models import JudgeEndpoint, JudgeRun, JudgeRunStatus, VideoAs

# --- Endpoints --------------------------------------------------------------------------


class JudgeEndpointSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    base_url = serializers.CharField(help_text="Requests go to <base_url>/chat/completions.")
    model = serializers.CharField()
    temperature = serializers.FloatField(
        allow_null=True, help_text="null: requests carry no temperature (the server's default)."
    )
    max_tokens = serializers.IntegerField()
    timeout_seconds = serializers.FloatField()
    has_api_key = serializers.BooleanField(help_text="Whether a key is stored (never the key).")
    updated_at = serializers.DateTimeField()


@guard_body(member_of(ADMIN_ROLES))
class JudgeEndpointListApi(APIView):
    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=80)
        base_url = serializers.CharField(
            max_length=500,
            help_text="http(s) URL up to /v1; a private address only where the server's "
            "JUDGE_ALLOWED_NETWORKS lists its network.",
        )
        model = serializers.CharField(max_length=200)
        api_key = serializers.CharField(
            required=False,
            allow_blank=True,
            max_length=1000,
            write_only=True,
            help_text="Stored encrypted, bound to the base URL's origin; never returned.",
        )
        temperature = serializers.FloatField(
            required=False,
            allow_null=True,
            min_value=0,
            max_value=2,
            help_text="Omit or null to send none, as the benchmark's judge script does.",
        )
        max_tokens = serializers.IntegerField(required=False, min_value=1, max_value=131072)
        timeout_seconds = serializers.FloatField(required=False, min_value=1, max_value=3600)

    @extend_schema(
        operation_id="judge_endpoints_list",
        summary="The project's judge endpoints (never their API keys)",
        responses={200: paginated(JudgeEndpointSerializer), **errors(401, 403, 404)},
        parameters=PAGE_PARAMETERS,
    )
    def get(self, request, slug):
        project = curated_project(request, slug)
        endpoints = JudgeEndpoint.objects.filter(project=project).order_by("name", "pk")
        return paginate(self, endpoints, JudgeEndpointSerializer)

    @extend_schema(
        operation_id="judge_endpoints_create",
        summary="Add a judge endpoint (admins)",
        request=InputSerializer,
        responses={201: JudgeEndpointSerializer, **errors(400, 401, 403, 404)},
    )
    def post(self, request, slug):
        project, _ = project_for_api(request.user, slug, ADMIN_ROLES)
        data = validated(self, request)
        # The page's form checks the address (scheme, no query, allowed
        # networks) and fills the defaults: one rule for both.
        form = JudgeEndpointForm(_form_data(data))
        if not form.is_valid():
            raise exceptions.ValidationError(
                {
                    ("non_field_errors" if field == "__all__" else field): [
                        e["message"] for e in problems
                    ]
                    for field, problems in form.errors.get_json_data().items()
                }
            )
        try:
            endpoint = save_endpoint(project=project, actor=request.user, **form.cleaned_data)
        except JudgeRunError as exc:
            raise Rejected(str(exc), code="endpoint_refused") from None
        return Response(JudgeEndpointSerializer(endpoint).data, status=201)


def _form_data(data: dict) -> QueryDict:
    initial = {name: field.initial for name, field in JudgeEndpointForm.base_fields.items()}
    values = {**{k: v for k, v in initial.items() if v is not None}, **data}
    form_data = QueryDict(mutable=True)
    for name, value in values.items():
        if value is not None and value is not False:
            form_data[name] = str(value)
    return form_data


# --- Runs -------------------------------------------------------------------------------


VIDEO_AS_HELP = (
    "How videos are sent: frames (JPEG images at moments drawn from the run's seed, "
    "the default) or video (one video_url part, for endpoints that accept one)."
)
VIDEO_FRAMES_HELP = "Frames sent per video when sent as frames: 1 to 64 (default 8)."


class JudgeRunSerializer(serializers.Serializer):
    class ProgressSerializer(serializers.Serializer):
        done = serializers.IntegerField(source="progress_done")
        total = serializers.IntegerField(
            source="progress_total", help_text="Requests: the calls of every item."
        )
        percent = serializers.IntegerField()

    id = serializers.IntegerField()
    name = serializers.CharField(help_text="Its name on the release's leaderboard.")
    release = serializers.IntegerField(
        source="release_id", allow_null=True, help_text="null: a run over the project's items."
    )
    project_items = serializers.BooleanField(
        source="on_project",
        help_text="A run over the project's benchmark items (its answers are votes for the "
        "calibration report, not a leaderboard entry).",
    )
    endpoint = serializers.IntegerField(
        source="endpoint_id", allow_null=True, help_text="null once the endpoint was deleted."
    )
    base_url = serializers.CharField()
    model = serializers.CharField()
    temperature = serializers.FloatField(allow_null=True, help_text="null: not sent.")
    max_tokens = serializers.IntegerField()
    timeout_seconds = serializers.FloatField()
    swapped = serializers.BooleanField(help_text="A second pass with Output1/Output2 swapped.")
    seed = serializers.IntegerField(
        help_text="Drawn at creation (53 bits); the benchmark draws each call's positions "
        "(a swap, a permutation) from it, so the run's requests can be sent again."
    )
    scoring = serializers.CharField(
        help_text=registry.described(
            lambda benchmarks: (
                "The key of the benchmark whose items it judges and whose rules "
                "score it: " + "; ".join(f"{b.key} ({b.judge_label})" for b in benchmarks) + "."
            )
        )
    )
    concurrency = serializers.IntegerField()
    video_as = serializers.ChoiceField(choices=VideoAs.choices, help_text=VIDEO_AS_HELP)
    video_frames = serializers.IntegerField(help_text=VIDEO_FRAMES_HELP)
    status = serializers.ChoiceField(choices=JudgeRunStatus.choices)
    progress = ProgressSerializer(source="*")
    n_errors = serializers.IntegerField(help_text="Requests that failed for good.")
    error = serializers.CharField(help_text="Why the run stopped (never holds the key).")
    stale = serializers.SerializerMethodField(
        help_text="Running, but its worker stopped writing a heartbeat: it may be resumed."
    )
    evaluation = serializers.IntegerField(
        source="evaluation_id", allow_null=True, help_text="The leaderboard entry, once complete."
    )
    created_by = serializers.CharField(source="created_by.username", allow_null=True)
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    heartbeat_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)

    def get_stale(self, run) -> bool:
        return is_stale(run)


def _run_for(project, run_id: int) -> JudgeRun:
    run = (
        JudgeRun.objects.filter(Q(release__project=project) | Q(project=project), pk=run_id)
        .select_related("created_by")
        .first()
    )
    if run is None:
        raise exceptions.NotFound("No such judge run.")
    return run


def run_endpoint(project, data: dict) -> JudgeEndpoint:
    """A new run's endpoint (one of the project's) with its concurrency within
    the server's limit, from a run's validated input (over a release or over
    the project's items); a 400 naming the field otherwise."""
    endpoint = JudgeEndpoint.objects.filter(project=project, pk=data["endpoint"]).first()
    if endpoint is None:
        raise exceptions.ValidationError({"endpoint": ["No such judge endpoint."]})
    limit = max_concurrency()
    if data["concurrency"] > limit:
        raise exceptions.ValidationError({"concurrency": [f"At most {limit}."]})
    return endpoint


@guard_body(member_of(CURATOR_ROLES))
class JudgeRunListApi(APIView):
    class InputSerializer(serializers.Serializer):
        endpoint = serializers.IntegerField(help_text="A judge endpoint of this project.")
        name = serializers.CharField(max_length=120, help_text="Its name on the leaderboard.")
        swapped = serializers.BooleanField(
            required=False, default=False, help_text="Also judge with Output1/Output2 swapped."
        )
        scoring = serializers.CharField(
            required=False,
            allow_null=True,
            default=None,
            help_text=registry.described(
                lambda benchmarks: (
                    "A benchmark's key: "
                    + "; ".join(f"{b.key} ({b.judge_label})" for b in benchmarks)
                    + ". Default: the release's most specific benchmark (one whose predictions "
                    "have a shape of their own, e.g. task files judged in both orders, before the "
                    "records)."
                )
            ),
        )
        concurrency = serializers.IntegerField(
            required=False, default=4, min_value=1, help_text="Requests in flight at once."
        )
        video_as = serializers.ChoiceField(
            choices=VideoAs.choices, required=False, default=VideoAs.FRAMES, help_text=VIDEO_AS_HELP
        )
        video_frames = serializers.IntegerField(
            required=False,
            default=media_content.DEFAULT_FRAMES,
            min_value=media_content.MIN_FRAMES,
            max_value=media_content.MAX_FRAMES,
            help_text=VIDEO_FRAMES_HELP,
        )

    @extend_schema(
        operation_id="judge_runs_list",
        summary="Judge runs over this release, newest first",
        responses={200: paginated(JudgeRunSerializer), **errors(401, 403, 404)},
        parameters=PAGE_PARAMETERS,
    )
    def get(self, request, slug, release_id):
        project = curated_project(request, slug)
        release = release_for(project, release_id)
        runs = JudgeRun.objects.filter(release=release).select_related("created_by")
        return paginate(self, runs.order_by("-created_at", "-pk"), JudgeRunSerializer)

    @extend_schema(
        operation_id="judge_runs_create",
        summary="Start a judge run over a ready release (queued in the background)",
        request=InputSerializer,
        responses={202: JudgeRunSerializer, **errors(400, 401, 403, 404)},
    )
    def post(self, request, slug, release_id):
        project = curated_project(request, slug)
        release = release_for(project, release_id)
        data = validated(self, request)
        endpoint = run_endpoint(project, data)
        try:
            run = start_judge_run(
                release=release,
                endpoint=endpoint,
                name=data["name"],
                swapped=data["swapped"],
                concurrency=data["concurrency"],
                scoring=data["scoring"],
                video_as=data["video_as"],
                video_frames=data["video_frames"],
                user=request.user,
            )
        except JudgeRunError as exc:
            raise Rejected(str(exc), code="run_refused") from None
        return Response(JudgeRunSerializer(run).data, status=202)


class JudgeRunDetailApi(APIView):
    @extend_schema(
        operation_id="judge_runs_retrieve",
        summary="A judge run: status and progress (poll it while pending or running)",
        responses={200: JudgeRunSerializer, **errors(401, 403, 404)},
    )
    def get(self, request, slug, run_id):
        project = curated_project(request, slug)
        return Response(JudgeRunSerializer(_run_for(project, run_id)).data)


@guard_body(member_of(CURATOR_ROLES))
class JudgeRunCancelApi(APIView):
    @extend_schema(
        operation_id="judge_runs_cancel",
        summary="Cancel a pending or running run (the answers received are kept)",
        request=None,
        responses={200: JudgeRunSerializer, **errors(401, 403, 404, 409)},
    )
    def post(self, request, slug, run_id):
        project = curated_project(request, slug)
        run = _run_for(project, run_id)
        if not cancel_judge_run(run=run):
            raise Conflict("Only a pending or running run can be cancelled.")
        return Response(JudgeRunSerializer(_run_for(project, run_id)).data)


@guard_body(member_of(CURATOR_ROLES))
class JudgeRunResumeApi(APIView):
    @extend_schema(
        operation_id="judge_runs_resume",
        summary="Resume a failed, cancelled or stalled run (only unanswered items are sent)",
        request=None,
        responses={202: JudgeRunSerializer, **errors(401, 403, 404, 409)},
    )
    def post(self, request, slug, run_id):
        project = curated_project(request, slug)
        run = _run_for(project, run_id)
        if not resume_judge_run(run=run):
            raise Conflict("Only a failed, cancelled or stalled run can be resumed.")
        return Response(JudgeRunSerializer(_run_for(project, run_id)).data, status=202)
