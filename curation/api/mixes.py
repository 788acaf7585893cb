"""REST API of training mixes (/api/v1/mixes/): the list, recording one (built
in the background), its status, report and checksums, its zip.

Who may: the curators and admins of a project (403 for everyone else); a mix
with a source from a project the caller does not curate is a 404 to them.
"""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from common.api.errors import Conflict, Rejected, errors
from common.api.input import validated
from common.api.paging import PAGE_PARAMETERS, paginate, paginated
from common.body_guard import guard_body
from curation.models import Mix, ReleaseStatus
from curation.releases.mixes.service import (
    PROVENANCES,
    STATUSES,
    MixError,
    MixVersionTaken,
    SourceChoice,
    create_mix,
    curated_projects,
    may_mix,
)
from curation.releases.mixes.views import mix_file_response


def require_curator_api(user) -> None:
    if not user.is_superuser and not curated_projects(user).exists():
        raise exceptions.PermissionDenied(
            "Training mixes are for the curators and admins of a project."
        )


def mix_for(user, mix_id: int) -> Mix:
    require_curator_api(user)
    mix = Mix.objects.visible_to(user).filter(pk=mix_id).select_related("created_by").first()
    if mix is None:
        raise exceptions.NotFound("No such mix.")
    return mix


class SourceSerializer(serializers.Serializer):
    project = serializers.SlugField(help_text="The project's slug.")
    release = serializers.CharField(
        required=False,
        allow_null=True,
        help_text="A ready release's version; omitted: the whole project's decided items.",
    )
    cap = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    weight = serializers.FloatField(required=False, allow_null=True, min_value=0.000001)


class MixSerializer(serializers.Serializer):
    class ProgressSerializer(serializers.Serializer):
        done = serializers.IntegerField(source="progress_done")
        total = serializers.IntegerField(source="progress_total")
        percent = serializers.IntegerField()

    id = serializers.IntegerField()
    name = serializers.SlugField()
    version = serializers.CharField()
    notes = serializers.CharField()
    seed = serializers.IntegerField()
    mode = serializers.ChoiceField(choices=Mix.Mode.choices)
    size = serializers.IntegerField(allow_null=True)
    dedup = serializers.BooleanField()
    filters = serializers.JSONField()
    sources = serializers.SerializerMethodField()
    status = serializers.ChoiceField(choices=ReleaseStatus.choices)
    progress = ProgressSerializer(source="*")
    counts = serializers.JSONField(help_text="Records per domain (when ready).")
    report = serializers.JSONField(
        help_text="Per source: candidates, filtered out by reason, duplicates (and of which "
        "source), over its limit, kept (when ready)."
    )
    sha256 = serializers.CharField(help_text="SHA-256 of the zip (when ready).")
    size_bytes = serializers.IntegerField()
    error = serializers.CharField(help_text="Why the build failed.")
    created_by = serializers.CharField(source="created_by.username", allow_null=True)
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    download_url = serializers.SerializerMethodField()

    @extend_schema_field(SourceSerializer(many=True))
    def get_sources(self, mix) -> list[dict]:
        return [
            {
                "project": s.project.slug,
                "release": s.release.version if s.release_id else None,
                "cap": s.cap,
                "weight": s.weight,
            }
            for s in mix.sources.all()
        ]

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_download_url(self, mix) -> str | None:
        if mix.status != ReleaseStatus.READY:
            return None
        return reverse("api_mix_download", args=[mix.pk])


def with_sources(queryset):
    return queryset.select_related("created_by").prefetch_related(
        "sources__project", "sources__release"
    )


@guard_body(may_mix)
class MixListApi(APIView):
    class InputSerializer(serializers.Serializer):
        name = serializers.SlugField(max_length=80)
        version = serializers.CharField(max_length=40)
        notes = serializers.CharField(required=False, default="", allow_blank=True)
        sources = SourceSerializer(many=True, help_text="In order: earlier sources win duplicates.")
        statuses = serializers.ListField(
            child=serializers.ChoiceField(choices=STATUSES),
            required=False,
            help_text="Default: agreed and resolved.",
        )
        provenances = serializers.ListField(
            child=serializers.ChoiceField(choices=PROVENANCES),
            required=False,
            help_text="Default: all.",
        )
        min_share = serializers.FloatField(
            required=False, allow_null=True, min_value=0, max_value=1
        )
        domains = serializers.ListField(child=serializers.SlugField(), required=False)
        mode = serializers.ChoiceField(choices=Mix.Mode.choices, default=Mix.Mode.CAPS)
        size = serializers.IntegerField(required=False, allow_null=True, min_value=1)
        dedup = serializers.BooleanField(default=True)
        seed = serializers.IntegerField(default=0, min_value=-(2**31), max_value=2**31 - 1)

    @extend_schema(
        operation_id="mixes_list",
        summary="Training mixes you may see, newest first",
        responses={200: paginated(MixSerializer), **errors(401, 403, 404)},
        parameters=PAGE_PARAMETERS,
    )
    def get(self, request):
        require_curator_api(request.user)
        mixes = with_sources(Mix.objects.visible_to(request.user)).order_by("-created_at", "-pk")
        return paginate(self, mixes, MixSerializer)

    @extend_schema(
        operation_id="mixes_create",
        summary="Record a training mix: built in the background",
        description="Poll the mix until `status` is `ready` (or `failed`).",
        request=InputSerializer,
        responses={202: MixSerializer, **errors(400, 401, 403, 409)},
    )
    def post(self, request):
        require_curator_api(request.user)
        data = validated(self, request)
        d = data
        try:
            mix = create_mix(
                user=request.user,
                name=d["name"],
                version=d["version"],
                notes=d["notes"],
                sources=[SourceChoice(**s) for s in d["sources"]],
                statuses=d.get("statuses") or list(STATUSES),
                provenances=d.get("provenances") or list(PROVENANCES),
                min_share=d.get("min_share"),
                domains=d.get("domains") or [],
                mode=d["mode"],
                size=d.get("size"),
                dedup=d["dedup"],
                seed=d["seed"],
            )
        except MixVersionTaken as exc:
            raise Conflict(str(exc), code="exists") from None
        except MixError as exc:
            raise Rejected(str(exc), code="refused") from None
        mix = with_sources(Mix.objects.filter(pk=mix.pk)).get()
        return Response(MixSerializer(mix).data, status=status.HTTP_202_ACCEPTED)


class MixDetailApi(APIView):
    @extend_schema(
        operation_id="mixes_retrieve",
        summary="A mix's status, progress, report and checksums",
        responses={200: MixSerializer, **errors(401, 403, 404)},
    )
    def get(self, request, mix_id):
        require_curator_api(request.user)
        mix = with_sources(Mix.objects.visible_to(request.user).filter(pk=mix_id)).first()
        if mix is None:
            raise exceptions.NotFound("No such mix.")
        return Response(MixSerializer(mix).data)


class MixDownloadApi(APIView):
    @extend_schema(
        operation_id="mixes_download",
        summary="The mix's zip (streamed); X-Content-SHA256 carries its checksum",
        responses={
            (200, "application/zip"): OpenApiResponse(OpenApiTypes.BINARY),
            **errors(401, 403, 404, 409),
        },
    )
    def get(self, request, mix_id):
        mix = mix_for(request.user, mix_id)
        if mix.status != ReleaseStatus.READY:
            raise Conflict(f"This mix is {mix.status}, not ready.", code="not_ready")
        try:
            return mix_file_response(mix)
        except FileNotFoundError:
            raise exceptions.NotFound("This mix's archive is missing from the storage.") from None
