"""REST API of releases (/api/v1/): the list, cutting one, its status and
checksums, its zip (curation.releases).
"""

from __future__ import annotations

from pathlib import PurePosixPath

from django.conf import settings
from django.core.files.storage import default_storage, storages
from django.http import FileResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.projects import CURATOR_ROLES, member_of
from common.api.errors import Conflict, Rejected, errors
from common.api.input import validated
from common.api.paging import PAGE_PARAMETERS, paginate, paginated
from common.body_guard import guard_body
from curation.api.access import curated_project
from curation.models import (
    PairwiseMode,
    Release,
    ReleaseStatus,
)
from curation.releases.filters import ACTIONS
from curation.releases.recovery import NotRetryable, retry_release
from curation.releases.service import (
    NothingToRelease,
    ReleaseError,
    ReleaseVersionTaken,
    create_release,
)


class ReleaseSerializer(serializers.Serializer):
    class ProgressSerializer(serializers.Serializer):
        done = serializers.IntegerField(source="progress_done")
        total = serializers.IntegerField(source="progress_total")
        percent = serializers.IntegerField()

    id = serializers.IntegerField()
    version = serializers.CharField()
    notes = serializers.CharField()
    seed = serializers.IntegerField()
    domains = serializers.ListField(child=serializers.SlugField())
    min_label_quality = serializers.FloatField(
        allow_null=True, help_text="The consensus-quality filter used, if any."
    )
    rekeyed = serializers.BooleanField(
        help_text="Whether the release's files use label-free IDs (map: the ids endpoint)."
    )
    pairwise = serializers.ChoiceField(
        choices=PairwiseMode.choices,
        help_text="How ranked and best-of-N items are decomposed into TRL pairs "
        '(pairwise/<domain>.parquet): best, all, or "" (none).',
    )
    status = serializers.ChoiceField(choices=ReleaseStatus.choices)
    progress = ProgressSerializer(source="*")
    counts = serializers.JSONField(help_text="Records per domain and sub-bucket (when ready).")
    sha256 = serializers.CharField(help_text="SHA-256 of the zip (when ready).")
    size_bytes = serializers.IntegerField()
    warnings = serializers.ListField(child=serializers.CharField())
    error = serializers.CharField(help_text="Why the build failed.")
    stalled = serializers.BooleanField(
        source="is_stalled",
        help_text="Building, but its worker stopped writing the heartbeat (it died): the "
        "sweep takes it over within minutes, or retry it now.",
    )
    heartbeat_at = serializers.DateTimeField(
        allow_null=True, help_text="When the building worker last said it was alive."
    )
    created_by = serializers.CharField(source="created_by.username", allow_null=True)
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    download_url = serializers.SerializerMethodField()
    filters = serializers.JSONField(
        help_text="The benchmark-construction filters and balancing asked for, with their "
        "parameters (curation.releases.filters)."
    )
    filter_report = serializers.SerializerMethodField(
        help_text="When ready: each filter's rule, parameters, ensemble and pairs dropped or "
        "held out per domain (the manifest's release_filters)."
    )
    balance_report = serializers.SerializerMethodField(
        help_text="When ready: side and length balance per domain (the manifest's)."
    )

    @extend_schema_field(serializers.JSONField(allow_null=True))
    def get_filter_report(self, release) -> dict | None:
        return (release.manifest or {}).get("release_filters")

    @extend_schema_field(serializers.JSONField(allow_null=True))
    def get_balance_report(self, release) -> dict | None:
        return (release.manifest or {}).get("balance_report")

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_download_url(self, release) -> str | None:
        if release.status != ReleaseStatus.READY:
            return None
        return reverse("api_release_download", args=[release.project.slug, release.pk])


def release_for(project, release_id: int) -> Release:
    release = (
        Release.objects.filter(project=project, pk=release_id)
        .select_related("created_by", "project")
        .first()
    )
    if release is None:
        raise exceptions.NotFound("No such release.")
    return release


# What each filter does with its pairs (drop, or hold: kept aside), one
# choice set in the schema (settings' ENUM_NAME_OVERRIDES: FilterActionEnum).
FILTER_ACTIONS = list(ACTIONS)

# The filter fields passed as they are to create_release (one validation).
FILTER_FIELDS = (
    "too_easy_judge_runs",
    "too_easy_action",
    "low_consensus",
    "low_consensus_action",
    "disagreement_ensemble",
    "disagreement_judge_runs",
    "disagreement_human",
    "disagreement_share",
    "disagreement_action",
    "balance_report",
    "balance_tolerance",
)


@guard_body(member_of(CURATOR_ROLES))
class ReleaseListApi(APIView):
    class InputSerializer(serializers.Serializer):
        version = serializers.CharField(max_length=40, help_text="e.g. v1.0; each version once.")
        notes = serializers.CharField(required=False, default="", allow_blank=True)
        domains = serializers.ListField(
            child=serializers.SlugField(),
            required=False,
            help_text="Domain slugs to include (default: all).",
        )
        seed = serializers.IntegerField(
            required=False,
            # Release.seed is a 32-bit column; a larger number must be a 400, not a 500.
            min_value=-(2**31),
            max_value=2**31 - 1,
            help_text="Seeds the Output1/Output2 slots (default: project seed).",
        )
        min_label_quality = serializers.FloatField(
            required=False,
            allow_null=True,
            min_value=0,
            max_value=1,
            help_text="Optional consensus-quality filter: leave out rule-agreed items whose "
            "CROWDLAB probability of their label is below this (needs a computed analysis).",
        )
        too_easy_ensemble = serializers.ListField(
            child=serializers.IntegerField(min_value=1),
            required=False,
            help_text="Optional too-easy filter: evaluation ids of the ensemble; pairs every "
            "entry got right in both orders are left out (recorded in manifest and card).",
        )
        too_easy_judge_runs = serializers.ListField(
            child=serializers.IntegerField(min_value=1),
            required=False,
            help_text="Optional: ids of complete judge runs on this project (JudgeRun with a "
            "project) joining the too-easy ensemble, read in canonical terms.",
        )
        too_easy_action = serializers.ChoiceField(
            choices=FILTER_ACTIONS, required=False, help_text="drop (default) or hold."
        )
        low_consensus = serializers.FloatField(
            required=False,
            allow_null=True,
            min_value=0,
            max_value=1,
            help_text="Optional low-consensus filter: pairs whose human consensus (share of "
            "current studio votes for the most-voted choice) is below this.",
        )
        low_consensus_action = serializers.ChoiceField(
            choices=FILTER_ACTIONS, required=False, help_text="drop (default) or hold."
        )
        disagreement_ensemble = serializers.ListField(
            child=serializers.IntegerField(min_value=1),
            required=False,
            help_text="Optional disagreement filter: evaluation ids of the ensemble; pairs "
            "where the human and the ensemble majorities differ, both strong.",
        )
        disagreement_judge_runs = serializers.ListField(
            child=serializers.IntegerField(min_value=1),
            required=False,
            help_text="Optional: ids of complete judge runs on this project joining the "
            "disagreement ensemble.",
        )
        disagreement_human = serializers.FloatField(
            required=False, allow_null=True, min_value=0.5, max_value=1,
            help_text="Human consensus at least this (above 0.5; default 0.8).",
        )  # fmt: skip
        disagreement_share = serializers.FloatField(
            required=False, allow_null=True, min_value=0.5, max_value=1,
            help_text="Ensemble share at least this (above 0.5; default 0.8).",
        )  # fmt: skip
        disagreement_action = serializers.ChoiceField(
            choices=FILTER_ACTIONS, required=False, help_text="hold (default) or drop."
        )
        balance_report = serializers.BooleanField(
            required=False,
            default=False,
            help_text="Report side and length balance (always with a filter or balancing).",
        )
        balance_tolerance = serializers.FloatField(
            required=False,
            allow_null=True,
            min_value=0,
            max_value=0.49,
            help_text="Optional length balancing: drop the fewest pairs (seeded by the "
            "release seed) so each domain's chosen-longer share is within this of 0.5.",
        )
        rekey = serializers.BooleanField(
            required=False,
            default=False,
            help_text="Give every record and pair a label-free ID, stable across the "
            "project's re-keyed releases; the map is at the release's ids endpoint.",
        )
        pairwise = serializers.ChoiceField(
            choices=PairwiseMode.choices,
            required=False,
            default="",
            allow_blank=True,
            help_text="Also write ranked and best-of-N items as TRL preference pairs: "
            "`best` (best vs each other) or `all` (every ordered pair); ties make no pair.",
        )

    @extend_schema(
        operation_id="releases_list",
        summary="The project's releases, newest first",
        responses={200: paginated(ReleaseSerializer), **errors(401, 403, 404)},
        parameters=PAGE_PARAMETERS,
    )
    def get(self, request, slug):
        project = curated_project(request, slug)
        releases = Release.objects.filter(project=project).select_related("created_by", "project")
        return paginate(self, releases.order_by("-created_at", "-pk"), ReleaseSerializer)

    @extend_schema(
        operation_id="releases_create",
        summary="Cut a release: recorded now, built in the background",
        description="Poll the release until `status` is `ready` (or `failed`); `progress` "
        "counts the items written. A release that would hold no item (none of the domains has "
        "an agreed or resolved item) is refused with 400 `nothing_to_release` and its version "
        "stays free.",
        request=InputSerializer,
        responses={202: ReleaseSerializer, **errors(400, 401, 403, 404, 409)},
    )
    def post(self, request, slug):
        project = curated_project(request, slug)
        data = validated(self, request)
        if Release.objects.filter(project=project, version=data["version"].strip()).exists():
            raise Conflict(
                f"Release {data['version'].strip()} already exists; releases are immutable.",
                code="exists",
            )
        domains = data.get("domains")
        if domains is None:
            domains = list(project.domains.values_list("slug", flat=True))
        try:
            release = create_release(
                project=project,
                version=data["version"],
                notes=data["notes"],
                domains=domains,
                seed=project.seed if data.get("seed") is None else data["seed"],
                user=request.user,
                min_label_quality=data.get("min_label_quality"),
                rekey=data["rekey"],
                pairwise=data["pairwise"],
                too_easy_ensemble=data.get("too_easy_ensemble") or None,
                **{name: data.get(name) for name in FILTER_FIELDS},
            )
        except ReleaseVersionTaken as exc:
            raise Conflict(str(exc), code="exists") from None
        except NothingToRelease as exc:  # recorded nothing: the version stays free
            raise Rejected(str(exc), code="nothing_to_release") from None
        except ReleaseError as exc:
            field = getattr(exc, "field", None)  # an ensemble's entry (filters.EnsembleError)
            if field:
                raise serializers.ValidationError({field: [str(exc)]}) from None
            raise Rejected(str(exc), code="refused") from None
        # Read again: an eager (or very fast) build may already have moved on.
        release = release_for(project, release.pk)
        return Response(ReleaseSerializer(release).data, status=status.HTTP_202_ACCEPTED)


class ReleaseDetailApi(APIView):
    @extend_schema(
        operation_id="releases_retrieve",
        summary="A release's status, progress and checksums",
        responses={200: ReleaseSerializer, **errors(401, 403, 404)},
    )
    def get(self, request, slug, release_id):
        project = curated_project(request, slug)
        return Response(ReleaseSerializer(release_for(project, release_id)).data)


@guard_body(member_of(CURATOR_ROLES))
class ReleaseRetryApi(APIView):
    @extend_schema(
        operation_id="releases_retry",
        summary="Build a failed or stalled release again from scratch (audited)",
        description="409 `not_retryable` for a release that is pending, ready, or building "
        "with a live worker (`stalled` false).",
        request=None,
        responses={202: ReleaseSerializer, **errors(401, 403, 404, 409)},
    )
    def post(self, request, slug, release_id):
        project = curated_project(request, slug)
        release = release_for(project, release_id)
        try:
            retry_release(release=release, actor=request.user)
        except NotRetryable as exc:
            raise Conflict(str(exc), code="not_retryable") from None
        # Read again: an eager (or very fast) build may already have moved on.
        return Response(
            ReleaseSerializer(release_for(project, release_id)).data,
            status=status.HTTP_202_ACCEPTED,
        )


class ReleaseIdMapApi(APIView):
    class OutputSerializer(serializers.Serializer):
        external_id = serializers.CharField(help_text="The item's ID in the studio.")
        released_id = serializers.CharField(help_text="Its ID in the release's files.")

    @extend_schema(
        operation_id="releases_id_map",
        summary="A re-keyed release's old and new IDs (curators and admins only)",
        description="409 `not_rekeyed` for a release that kept its IDs, `not_ready` for one "
        "not built yet.",
        responses={200: paginated(OutputSerializer), **errors(401, 403, 404, 409)},
        parameters=PAGE_PARAMETERS,
    )
    def get(self, request, slug, release_id):
        project = curated_project(request, slug)
        release = release_for(project, release_id)
        if release.status != ReleaseStatus.READY:
            raise Conflict(f"This release is {release.status}, not ready.", code="not_ready")
        if not release.rekeyed:
            raise Conflict("This release kept its IDs.", code="not_rekeyed")
        rows = (
            release.release_items.exclude(released_id="")
            .order_by("external_id")
            .values("external_id", "released_id")
        )
        return paginate(self, rows, self.OutputSerializer)


def _release_storage():
    """Where published releases live: the "releases" storage when one is
    configured (it may be a bucket), else the default (media) storage."""
    return storages["releases"] if "releases" in settings.STORAGES else default_storage


class ReleaseDownloadApi(APIView):
    @extend_schema(
        operation_id="releases_download",
        summary="The release's zip (streamed); X-Content-SHA256 carries its checksum",
        responses={
            (200, "application/zip"): OpenApiResponse(OpenApiTypes.BINARY),
            **errors(401, 403, 404, 409),
        },
    )
    def get(self, request, slug, release_id):
        project = curated_project(request, slug)
        release = release_for(project, release_id)
        if release.status != ReleaseStatus.READY:
            raise Conflict(f"This release is {release.status}, not ready.", code="not_ready")
        try:
            stream = _release_storage().open(release.archive, "rb")
        except FileNotFoundError:
            raise exceptions.NotFound(
                "This release's archive is missing from the storage."
            ) from None
        response = FileResponse(
            stream,
            as_attachment=True,
            filename=PurePosixPath(release.archive).name,
            content_type="application/zip",
        )
        response["Content-Length"] = str(release.size_bytes)
        response["X-Content-SHA256"] = release.sha256
        return response
