"""REST API of the curation app (/api/v1/): verdicts and adjudication,
agreement summaries, releases and evaluations. Curators and admins only, as
the HTML pages; the work is done by the same services (curation.verdicts.service,
curation.releases.build, curation.evaluation.service, curation.agreement.reports).
"""

from __future__ import annotations

import math
from pathlib import PurePosixPath

from django.conf import settings
from django.core.files.storage import default_storage, storages
from django.db.models import Q
from django.http import FileResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import exceptions, serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.apis import project_for_api
from annotate.eligibility import eligible_counts
from annotate.models import Judgement, Membership
from annotate.permissions import CURATOR_ROLES
from common.api.errors import Conflict, PayloadTooLarge, Rejected, errors
from common.api.paging import PAGE_PARAMETERS, paginate, paginated
from common.api.schema import CANONICAL_CHOICES, OPTIONAL_RESPONSES, RESPONSES
from curation.agreement import reports
from curation.agreement import stats as agreement
from curation.agreement.reports import request_agreement_refresh
from curation.evaluation.service import MAX_PREDICTIONS_BYTES, EvaluationError, evaluate_release
from curation.models import (
    ContestKind,
    Evaluation,
    ExclusionCategory,
    Release,
    ReleaseStatus,
    Verdict,
    VerdictStatus,
)
from curation.releases.build import ReleaseError, ReleaseVersionTaken, create_release
from curation.verdicts.decisions import (
    ConflictOfInterest,
    CurationError,
    StaleDecision,
    exclude_item,
    reopen_item,
    request_more_votes,
    resolve_item,
)
from curation.verdicts.service import stuck_items, stuck_reason


def _curated_project(request, slug):
    project, _ = project_for_api(request.user, slug, CURATOR_ROLES)
    return project


# --- Verdicts and adjudication --------------------------------------------------------------


class VerdictSerializer(serializers.Serializer):
    class VotesSerializer(serializers.Serializer):
        response_1 = serializers.IntegerField(source="votes_1")
        response_2 = serializers.IntegerField(source="votes_2")
        tie = serializers.IntegerField(source="votes_tie")

    item_id = serializers.IntegerField()
    external_id = serializers.CharField(source="item.external_id")
    domain = serializers.SlugField(source="item.domain.slug")
    status = serializers.ChoiceField(choices=VerdictStatus.choices)
    final_choice = serializers.ChoiceField(
        choices=[*OPTIONAL_RESPONSES, "tie"],
        help_text="Canonical response chosen (agreed or resolved); 'tie' when a curator "
        "resolved it as a tie (such items are not in MRB releases).",
    )
    provenance = serializers.CharField(help_text="unanimous, majority, adjudicated, gold or ''.")
    contest_kind = serializers.ChoiceField(choices=ContestKind.choices)
    exclusion_category = serializers.ChoiceField(choices=ExclusionCategory.choices)
    reason = serializers.CharField()
    escalations = serializers.IntegerField()
    escalated_by = serializers.IntegerField(
        help_text="Extra votes the escalation asks for now (capped by eligible annotators)."
    )
    version = serializers.IntegerField(help_text="Send it back with a decision.")
    votes = VotesSerializer(source="item", help_text="Current votes, canonical.")
    votes_needed = serializers.IntegerField(source="item.votes_needed")
    decided_by = serializers.CharField(source="decided_by.username", allow_null=True)
    updated_at = serializers.DateTimeField()


def _verdicts(project):
    return Verdict.objects.filter(project=project).select_related("item__domain", "decided_by")


class VerdictListApi(APIView):
    class FilterSerializer(serializers.Serializer):
        status = serializers.ChoiceField(
            choices=["all", *VerdictStatus.values, "stuck"],
            required=False,
            default="all",
            help_text="'stuck': items waiting for votes that no eligible annotator can give.",
        )
        domain = serializers.SlugField(required=False)
        kind = serializers.ChoiceField(choices=ContestKind.values, required=False)
        q = serializers.CharField(required=False, help_text="Text in the ID or prompt.")

    @extend_schema(
        operation_id="verdicts_list",
        summary="Verdicts of the project's items (curators), oldest change first",
        parameters=[FilterSerializer, *PAGE_PARAMETERS],
        responses={200: paginated(VerdictSerializer), **errors(400, 401, 403, 404)},
    )
    def get(self, request, slug):
        project = _curated_project(request, slug)
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        f = filters.validated_data
        verdicts = _verdicts(project)
        if f["status"] == "stuck":
            verdicts = verdicts.stuck(project)
        elif f["status"] != "all":
            verdicts = verdicts.filter(status=f["status"])
        if f.get("domain"):
            verdicts = verdicts.filter(item__domain__slug=f["domain"])
        if f.get("kind"):
            verdicts = verdicts.filter(contest_kind=f["kind"])
        if f.get("q"):
            q = f["q"]
            verdicts = verdicts.filter(
                Q(item__external_id__icontains=q) | Q(item__prompt__icontains=q)
            )
        return paginate(self, verdicts.order_by("updated_at", "pk"), VerdictSerializer)


class VerdictDetailSerializer(VerdictSerializer):
    class ItemSerializer(serializers.Serializer):
        prompt = serializers.CharField()
        image_path = serializers.CharField(help_text="The image's path in the source dataset.")
        response_1 = serializers.CharField()
        response_2 = serializers.CharField()
        model_1 = serializers.CharField()
        model_2 = serializers.CharField()
        gold_choice = serializers.ChoiceField(choices=OPTIONAL_RESPONSES)
        reference_answer = serializers.CharField()

    class VoteSerializer(serializers.Serializer):
        annotator = serializers.CharField(help_text="The annotator's pseudonym.")
        choice = serializers.ChoiceField(choices=CANONICAL_CHOICES, help_text="Canonical.")
        correct_1 = serializers.CharField()
        correct_2 = serializers.CharField()
        confidence = serializers.IntegerField(allow_null=True)
        rationale = serializers.CharField()
        shown_left = serializers.ChoiceField(
            choices=RESPONSES, help_text="Which response this annotator saw on the left."
        )
        seconds_spent = serializers.FloatField()
        flagged_problem = serializers.BooleanField()
        problem_reason = serializers.CharField()

    item = ItemSerializer()
    current_votes = VoteSerializer(many=True)
    you_voted = serializers.BooleanField(
        help_text="You voted on this item: unless the project allows self-adjudication, "
        "another curator must decide it."
    )
    eligible_annotators = serializers.IntegerField(
        help_text="Annotators who could still vote on it (active, annotator role, never "
        "assigned it): asking for more votes than this leaves the item stuck."
    )
    stuck = serializers.CharField(
        allow_null=True,
        help_text="Why it waits for votes no eligible annotator can give; null if it does not.",
    )


def _verdict_detail(project, item_id: int, user) -> dict:
    verdict = _verdicts(project).filter(item_id=item_id).first()
    if verdict is None:
        raise exceptions.NotFound("No such item.")
    names = dict(Membership.objects.filter(project=project).values_list("user_id", "pseudonym"))
    votes = []
    you_voted = False
    for j in Judgement.objects.filter(assignment__item_id=item_id).select_related("assignment"):
        a = j.assignment
        you_voted = you_voted or a.annotator_id == user.pk
        if not j.is_current:
            continue
        votes.append(
            {
                "annotator": names.get(a.annotator_id) or f"annotator #{a.annotator_id}",
                "choice": j.choice,
                "correct_1": j.correct_1,
                "correct_2": j.correct_2,
                "confidence": j.confidence,
                "rationale": j.rationale,
                "shown_left": "2" if a.shown_swapped else "1",
                "seconds_spent": j.seconds_spent,
                "flagged_problem": j.flagged_problem,
                "problem_reason": j.problem_reason,
            }
        )
    data = VerdictSerializer(verdict).data
    stuck = stuck_items(project).filter(pk=item_id).first()
    data.update(
        item=VerdictDetailSerializer.ItemSerializer(verdict.item).data,
        current_votes=votes,
        you_voted=you_voted,
        eligible_annotators=eligible_counts(project=project, item_ids=[item_id])[item_id],
        stuck=stuck_reason(stuck) if stuck is not None else None,
    )
    return data


class VerdictDetailApi(APIView):
    @extend_schema(
        operation_id="verdicts_retrieve",
        summary="One item's verdict with its content, model names, gold and every vote",
        responses={200: VerdictDetailSerializer, **errors(401, 403, 404)},
    )
    def get(self, request, slug, item_id):
        project = _curated_project(request, slug)
        return Response(_verdict_detail(project, item_id, request.user))


class DecisionApi(APIView):
    class InputSerializer(serializers.Serializer):
        action = serializers.ChoiceField(choices=["resolve", "exclude", "more_votes", "reopen"])
        choice = serializers.ChoiceField(
            choices=CANONICAL_CHOICES,
            required=False,
            help_text="resolve: the better response, or 'tie' (projects that allow ties).",
        )
        category = serializers.ChoiceField(
            choices=[c for c in ExclusionCategory.values if c],
            required=False,
            help_text="exclude: why.",
        )
        n = serializers.IntegerField(
            min_value=1, max_value=20, required=False, default=2, help_text="more_votes: how many."
        )
        reason = serializers.CharField(
            max_length=5000, help_text="Required: it goes into the audit trail."
        )
        version = serializers.IntegerField(
            min_value=0, help_text="The verdict version you decided on (from the verdict)."
        )

        def validate(self, data):
            if data["action"] == "resolve" and not data.get("choice"):
                raise serializers.ValidationError({"choice": "Choose response 1 or 2."})
            if data["action"] == "exclude" and not data.get("category"):
                raise serializers.ValidationError({"category": "Choose why it is excluded."})
            return data

    @extend_schema(
        operation_id="verdicts_decide",
        summary="Decide any open item: resolve, exclude, ask for more votes, reopen",
        description="Same rules as the adjudication page, in any state (an item still "
        "collecting votes stops collecting when resolved or excluded, and goes to the "
        "contested queue when reopened): a reason is required and audited; "
        "a decision on a stale `version` is refused with 409 (code `stale`); a curator who "
        "voted on the item gets 403 (code `conflict_of_interest`) unless the project allows "
        "self-adjudication.",
        request=InputSerializer,
        responses={200: VerdictDetailSerializer, **errors(400, 401, 403, 404, 409)},
    )
    def post(self, request, slug, item_id):
        project = _curated_project(request, slug)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        common = {
            "project": project,
            "item_id": item_id,
            "curator": request.user,
            "reason": data["reason"],
            "version": data["version"],
        }
        try:
            if data["action"] == "resolve":
                resolve_item(choice=data["choice"], **common)
            elif data["action"] == "exclude":
                exclude_item(category=data["category"], **common)
            elif data["action"] == "more_votes":
                request_more_votes(n=data["n"], **common)
            else:
                reopen_item(**common)
        except Verdict.DoesNotExist:
            raise exceptions.NotFound("No such item.") from None
        except StaleDecision as exc:
            raise Conflict(str(exc), code="stale") from None
        except ConflictOfInterest as exc:
            raise exceptions.PermissionDenied(str(exc), code="conflict_of_interest") from None
        except CurationError as exc:
            raise Rejected(str(exc), code="refused") from None
        return Response(_verdict_detail(project, item_id, request.user))


# --- Agreement ------------------------------------------------------------------------------


class StatSerializer(serializers.Serializer):
    value = serializers.FloatField(allow_null=True)
    undefined = serializers.CharField(
        allow_null=True, help_text="Why there is no value (e.g. too few pairable votes)."
    )


class IntervalSerializer(serializers.Serializer):
    low = serializers.FloatField(allow_null=True)
    high = serializers.FloatField(allow_null=True)
    undefined = serializers.CharField(allow_null=True)


def _stat(value) -> dict:
    if isinstance(value, agreement.Undefined):
        return {"value": None, "undefined": value.reason}
    if value is None or not math.isfinite(value):
        return {"value": None, "undefined": "not a finite number"}
    return {"value": float(value), "undefined": None}


def _interval(value) -> dict | None:
    """None: not computed yet (the background refresh fills it)."""
    if value is None:
        return None
    if isinstance(value, agreement.Undefined):
        return {"low": None, "high": None, "undefined": value.reason}
    return {"low": float(value.low), "high": float(value.high), "undefined": None}


class ReliabilitySerializer(serializers.Serializer):
    alpha = StatSerializer(help_text="Krippendorff's alpha (nominal).")
    alpha_ci95 = IntervalSerializer(
        allow_null=True, help_text="Item-bootstrap 95% interval; null until computed."
    )
    ac1 = StatSerializer(help_text="Gwet's AC1.")
    pairwise_agreement = StatSerializer()
    n_units = serializers.IntegerField()
    n_values = serializers.IntegerField()
    n_pairable = serializers.IntegerField()
    rates = serializers.DictField(child=StatSerializer(), help_text="Share of each category.")


def _reliability(r: agreement.Reliability, ci) -> dict:
    return {
        "alpha": _stat(r.alpha),
        "alpha_ci95": _interval(ci),
        "ac1": _stat(r.ac1),
        "pairwise_agreement": _stat(r.pairwise_agreement),
        "n_units": r.n_units,
        "n_values": r.n_values,
        "n_pairable": r.n_pairable,
        "rates": {k: _stat(v) for k, v in r.rates.items()},
    }


class AgreementDomainSerializer(serializers.Serializer):
    domain = serializers.CharField(help_text="Domain slug, or `all` for the project.")
    title = serializers.CharField()
    kind = serializers.CharField(help_text="correctness, preference, or '' for `all`.")
    n_items = serializers.IntegerField()
    n_votes = serializers.IntegerField()
    percent_complete = serializers.FloatField()
    contested = serializers.IntegerField()
    choice = ReliabilitySerializer(help_text="On canonical choices 1 / 2 / tie.")
    correctness = ReliabilitySerializer(help_text="On correctness labels (item x response).")


class AgreementApi(APIView):
    class OutputSerializer(serializers.Serializer):
        project = serializers.SlugField()
        intervals_computed_at = serializers.DateTimeField(
            allow_null=True, help_text="When the cached intervals were computed."
        )
        intervals_stale = serializers.BooleanField(
            help_text="Votes arrived since the intervals were computed."
        )
        refresh_requested_at = serializers.DateTimeField(allow_null=True)
        domains = AgreementDomainSerializer(many=True)

    @extend_schema(
        operation_id="agreement_retrieve",
        summary="Agreement per domain: point estimates now, cached bootstrap intervals",
        responses={200: OutputSerializer, **errors(401, 403, 404)},
    )
    def get(self, request, slug):
        project = _curated_project(request, slug)
        report = reports.build_report(project)
        cache = report.cache
        body = {
            "project": project.slug,
            "intervals_computed_at": cache.computed_at if cache else None,
            "intervals_stale": report.stale,
            "refresh_requested_at": cache.requested_at if cache else None,
            "domains": [
                {
                    "domain": row.key,
                    "title": row.title,
                    "kind": row.kind,
                    "n_items": row.n_items,
                    "n_votes": row.n_votes,
                    "percent_complete": row.percent_complete,
                    "contested": row.contested,
                    "choice": _reliability(row.summary.choice, row.alpha_ci),
                    "correctness": _reliability(row.summary.correctness, row.correctness_ci),
                }
                for row in report.domains
            ],
        }
        return Response(self.OutputSerializer(body).data)


class AgreementRefreshApi(APIView):
    class OutputSerializer(serializers.Serializer):
        queued = serializers.BooleanField(
            help_text="False when a recomputation was already queued."
        )

    @extend_schema(
        operation_id="agreement_refresh",
        summary="Recompute the bootstrap intervals in the background",
        request=None,
        responses={202: OutputSerializer, **errors(401, 403, 404)},
    )
    def post(self, request, slug):
        project = _curated_project(request, slug)
        queued = request_agreement_refresh(project=project)
        return Response(self.OutputSerializer({"queued": queued}).data, status=202)


# --- Releases -------------------------------------------------------------------------------


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
    status = serializers.ChoiceField(choices=ReleaseStatus.choices)
    progress = ProgressSerializer(source="*")
    counts = serializers.JSONField(help_text="Records per domain and sub-bucket (when ready).")
    sha256 = serializers.CharField(help_text="SHA-256 of the zip (when ready).")
    size_bytes = serializers.IntegerField()
    warnings = serializers.ListField(child=serializers.CharField())
    error = serializers.CharField(help_text="Why the build failed.")
    created_by = serializers.CharField(source="created_by.username", allow_null=True)
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    download_url = serializers.SerializerMethodField()

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_download_url(self, release) -> str | None:
        if release.status != ReleaseStatus.READY:
            return None
        return reverse("api_release_download", args=[release.project.slug, release.pk])


def _release_for(project, release_id: int) -> Release:
    release = (
        Release.objects.filter(project=project, pk=release_id)
        .select_related("created_by", "project")
        .first()
    )
    if release is None:
        raise exceptions.NotFound("No such release.")
    return release


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

    @extend_schema(
        operation_id="releases_list",
        summary="The project's releases, newest first",
        responses={200: paginated(ReleaseSerializer), **errors(401, 403, 404)},
        parameters=PAGE_PARAMETERS,
    )
    def get(self, request, slug):
        project = _curated_project(request, slug)
        releases = Release.objects.filter(project=project).select_related("created_by", "project")
        return paginate(self, releases.order_by("-created_at", "-pk"), ReleaseSerializer)

    @extend_schema(
        operation_id="releases_create",
        summary="Cut a release: recorded now, built in the background",
        description="Poll the release until `status` is `ready` (or `failed`); `progress` "
        "counts the items written.",
        request=InputSerializer,
        responses={202: ReleaseSerializer, **errors(400, 401, 403, 404, 409)},
    )
    def post(self, request, slug):
        project = _curated_project(request, slug)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
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
            )
        except ReleaseVersionTaken as exc:
            raise Conflict(str(exc), code="exists") from None
        except ReleaseError as exc:
            raise Rejected(str(exc), code="refused") from None
        # Read again: an eager (or very fast) build may already have moved on.
        release = _release_for(project, release.pk)
        return Response(ReleaseSerializer(release).data, status=status.HTTP_202_ACCEPTED)


class ReleaseDetailApi(APIView):
    @extend_schema(
        operation_id="releases_retrieve",
        summary="A release's status, progress and checksums",
        responses={200: ReleaseSerializer, **errors(401, 403, 404)},
    )
    def get(self, request, slug, release_id):
        project = _curated_project(request, slug)
        return Response(ReleaseSerializer(_release_for(project, release_id)).data)


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
        project = _curated_project(request, slug)
        release = _release_for(project, release_id)
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


# --- Evaluations ------------------------------------------------------------------------------


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

    @extend_schema(
        operation_id="evaluations_list",
        summary="Evaluations scored against this release (the leaderboard)",
        responses={200: paginated(EvaluationSerializer), **errors(401, 403, 404)},
        parameters=PAGE_PARAMETERS,
    )
    def get(self, request, slug, release_id):
        project = _curated_project(request, slug)
        release = _release_for(project, release_id)
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
        project = _curated_project(request, slug)
        release = _release_for(project, release_id)
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
        project = _curated_project(request, slug)
        release = _release_for(project, release_id)
        evaluation = (
            Evaluation.objects.filter(release=release, pk=evaluation_id)
            .select_related("created_by")
            .first()
        )
        if evaluation is None:
            raise exceptions.NotFound("No such evaluation.")
        return Response(EvaluationDetailSerializer(evaluation).data)
