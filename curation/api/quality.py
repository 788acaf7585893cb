"""REST endpoints of the label-quality sub-domain (/api/v1/): per-item
results of evaluations, label quality (CROWDLAB, Dawid-Skene) and the
suspected-errors queue. Curators and admins only, as the HTML pages; the work
is done by the same services."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.api.projects import project_for_api
from annotate.models import Item
from annotate.projects import CURATOR_ROLES, member_of
from common.api.errors import Conflict, errors
from common.api.input import validated
from common.api.paging import PAGE_PARAMETERS, paginate, paginated
from common.api.schema import OPTIONAL_RESPONSES, RESPONSES
from common.body_guard import guard_body
from curation.api.decisions import decision_errors, decision_keywords
from curation.models import ItemQuality, LabelQualityRun, LabelQualityStatus
from curation.quality.libraries import libraries_available
from curation.quality.service import INSTALL_HINT, LabelQualityError, request_label_quality
from curation.quality.views import (
    VIEWS,
    entry_for,
    entry_predictions,
    item_entries,
    suspected_errors,
)
from curation.verdicts.decisions import (
    confirm_label,
    overturn_label,
)


def _project(request, slug):
    project, _ = project_for_api(request.user, slug, CURATOR_ROLES)
    return project


class ItemPredictionSerializer(serializers.Serializer):
    evaluation = serializers.IntegerField(source="evaluation_id")
    item_id = serializers.IntegerField()
    external_id = serializers.CharField()
    category = serializers.CharField()
    sub_bucket = serializers.CharField()
    chosen = serializers.ChoiceField(
        choices=RESPONSES, help_text="The release's better response, canonical."
    )
    choice = serializers.ChoiceField(
        choices=OPTIONAL_RESPONSES,
        help_text="The original order's pick, canonical ('' = no pick: equal scores).",
    )
    swapped_choice = serializers.ChoiceField(
        choices=OPTIONAL_RESPONSES, help_text="The swapped order's pick, canonical."
    )
    has_swapped = serializers.BooleanField()
    correct = serializers.BooleanField(help_text="The official verdict of the original order.")
    random_verdict = serializers.BooleanField(
        help_text="Judge text without [[A]]/[[B]]: the official scorer's random draw."
    )
    p1 = serializers.FloatField(
        allow_null=True, help_text="The entry's P(response 1 better); null without evidence."
    )
    raw = serializers.JSONField(help_text="Per order: the scores or the judge's text.")


class EntryItemsApi(APIView):
    class FilterSerializer(serializers.Serializer):
        show = serializers.ChoiceField(
            choices=["wrong", "right", "all"], required=False, default="wrong"
        )
        category = serializers.CharField(required=False)
        sub_bucket = serializers.CharField(required=False)

    @extend_schema(
        operation_id="evaluations_items",
        summary="An evaluation's per-item results (default: the items it got wrong)",
        parameters=[FilterSerializer, *PAGE_PARAMETERS],
        responses={200: paginated(ItemPredictionSerializer), **errors(400, 401, 403, 404)},
    )
    def get(self, request, slug, release_id, evaluation_id):
        project = _project(request, slug)
        try:
            evaluation = entry_for(project, release_id, evaluation_id)
        except Http404:
            raise exceptions.NotFound("No such evaluation.") from None
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        rows = entry_predictions(evaluation, filters.validated_data)
        return paginate(self, rows, ItemPredictionSerializer)


class ItemPredictionsApi(APIView):
    @extend_schema(
        operation_id="items_predictions",
        summary="How every leaderboard entry (all releases) judged one item",
        responses={200: ItemPredictionSerializer(many=True), **errors(401, 403, 404)},
    )
    def get(self, request, slug, item_id):
        project = _project(request, slug)
        item = Item.objects.filter(project=project, pk=item_id).first()
        if item is None:
            raise exceptions.NotFound("No such item.")
        return Response(ItemPredictionSerializer(item_entries(item), many=True).data)


class LabelQualitySerializer(serializers.Serializer):
    available = serializers.BooleanField(
        help_text='False: the optional "quality" extra (cleanlab, crowd-kit) is not installed.'
    )
    install_hint = serializers.CharField(allow_null=True)
    status = serializers.ChoiceField(choices=LabelQualityStatus.choices)
    evaluations = serializers.ListField(
        child=serializers.IntegerField(), help_text="The entries in the model ensemble."
    )
    judge_runs = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="Project judge runs labelling too (their figures: summary.judges).",
    )
    requested_at = serializers.DateTimeField(allow_null=True)
    computed_at = serializers.DateTimeField(allow_null=True)
    seconds = serializers.FloatField(allow_null=True)
    error = serializers.CharField()
    summary = serializers.SerializerMethodField(
        help_text="n_items, n_votes, n_ties_left_out, n_with_model, model_weight, entries."
    )
    annotators = serializers.SerializerMethodField(
        help_text="Per annotator (user id): pseudonym, CROWDLAB quality, agreement with the "
        "consensus, labels counted."
    )

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_summary(self, data) -> dict:
        payload = dict(data.get("payload") or {})
        payload.pop("annotators", None)
        return payload

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_annotators(self, data) -> dict:
        return (data.get("payload") or {}).get("annotators", {})


def _quality_data(project) -> dict:
    run = LabelQualityRun.objects.filter(project=project).first()
    available = libraries_available()
    payload = dict(run.payload) if run else {}
    if payload.get("annotators"):
        # Name annotators as the rest of the API does (pseudonyms), keyed by user id.
        names = dict(project.memberships.values_list("user_id", "pseudonym"))
        payload["annotators"] = {
            key: {**value, "pseudonym": names.get(int(key), "")}
            for key, value in payload["annotators"].items()
        }
    return {
        "available": available,
        "install_hint": None if available else INSTALL_HINT,
        "status": run.status if run else LabelQualityStatus.NEVER,
        "evaluations": run.evaluations if run else [],
        "judge_runs": run.judge_runs if run else [],
        "requested_at": run.requested_at if run else None,
        "computed_at": run.computed_at if run else None,
        "seconds": run.seconds if run else None,
        "error": run.error if run else "",
        "payload": payload,
    }


class LabelQualityApi(APIView):
    @extend_schema(
        operation_id="label_quality_retrieve",
        summary="The project's label-quality analysis: status, summary, annotator quality",
        responses={200: LabelQualitySerializer, **errors(401, 403, 404)},
    )
    def get(self, request, slug):
        project = _project(request, slug)
        return Response(LabelQualitySerializer(_quality_data(project)).data)


@guard_body(member_of(CURATOR_ROLES))
class LabelQualityRefreshApi(APIView):
    class InputSerializer(serializers.Serializer):
        evaluations = serializers.ListField(
            child=serializers.IntegerField(),
            allow_empty=True,
            help_text="Leaderboard entries (evaluation ids, any release of the project) whose "
            "mean probability is the model ensemble; [] = the votes alone.",
        )
        judge_runs = serializers.ListField(
            child=serializers.IntegerField(),
            required=False,
            default=list,
            help_text="Project judge runs (issue 36) whose votes join as extra labellers.",
        )

    @extend_schema(
        operation_id="label_quality_refresh",
        summary="Compute label quality again in the background",
        description="202 whether or not a computation was already queued (then nothing new "
        "is queued); poll the analysis for `computed_at`. 409 with code "
        "`quality_extra_missing` when cleanlab/crowd-kit are not installed.",
        request=InputSerializer,
        responses={202: LabelQualitySerializer, **errors(400, 401, 403, 404, 409)},
    )
    def post(self, request, slug):
        project = _project(request, slug)
        chosen = validated(self, request)
        if not libraries_available():
            raise Conflict(INSTALL_HINT, code="quality_extra_missing")
        try:
            request_label_quality(
                project=project,
                evaluations=chosen["evaluations"],
                judge_runs=chosen["judge_runs"],
                user=request.user,
            )
        except LabelQualityError as exc:
            raise serializers.ValidationError({"evaluations": [str(exc)]}) from None
        data = LabelQualitySerializer(_quality_data(project)).data
        return Response(data, status=status.HTTP_202_ACCEPTED)


class SuspectSerializer(serializers.Serializer):
    item_id = serializers.IntegerField()
    external_id = serializers.CharField(source="item.external_id")
    domain = serializers.SlugField(source="item.domain.slug")
    status = serializers.CharField(source="item.verdict.status")
    provenance = serializers.CharField(source="item.verdict.provenance")
    version = serializers.IntegerField(
        source="item.verdict.version", help_text="Send it back with a decision."
    )
    label = serializers.ChoiceField(choices=RESPONSES, help_text="The current label, canonical.")
    label_quality = serializers.FloatField(
        help_text="CROWDLAB's probability that the current label is right (the sort key)."
    )
    votes = serializers.SerializerMethodField()
    model_p1 = serializers.FloatField(
        allow_null=True, help_text="Mean P(response 1 better) of the selected entries."
    )
    ds_p1 = serializers.FloatField(help_text="Dawid-Skene posterior of response 1, votes alone.")
    models_against = serializers.FloatField(
        allow_null=True, help_text="The models' probability that the current label is wrong."
    )
    unanimous = serializers.BooleanField(help_text="Two or more votes, all on one side.")
    mean_strength = serializers.FloatField(
        allow_null=True,
        help_text="Graded votes: their mean signed strength, oriented to response 1 (3 much "
        "better … -3); null on an A/B scale.",
    )
    consensus = serializers.ChoiceField(choices=RESPONSES)
    consensus_quality = serializers.FloatField()
    annotator_agreement = serializers.FloatField()

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_votes(self, q) -> dict:
        return {"response_1": q.n1, "response_2": q.n2, "tie": q.n_tie}


class SuspectListApi(APIView):
    class FilterSerializer(serializers.Serializer):
        domain = serializers.SlugField(required=False)
        view = serializers.ChoiceField(
            choices=list(VIEWS),
            required=False,
            default="all",
            help_text="all: every suspect, least trusted label first; unanimous: items every "
            "vote agrees on while the models give the label less than even odds, the "
            "models' confidence against the label first.",
        )

    @extend_schema(
        operation_id="label_quality_suspects",
        summary="Suspected label errors: agreed/resolved items, least trusted label first "
        "(view=unanimous: unanimous labels the models disagree with)",
        parameters=[FilterSerializer, *PAGE_PARAMETERS],
        responses={200: paginated(SuspectSerializer), **errors(400, 401, 403, 404)},
    )
    def get(self, request, slug):
        project = _project(request, slug)
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        return paginate(self, suspected_errors(project, filters.validated_data), SuspectSerializer)


@guard_body(member_of(CURATOR_ROLES))
class SuspectDecisionApi(APIView):
    class InputSerializer(serializers.Serializer):
        action = serializers.ChoiceField(
            choices=["confirm", "overturn"],
            help_text="confirm: provenance becomes 'reviewed'; overturn: resolve for the other "
            "response (a reason is required).",
        )
        reason = serializers.CharField(max_length=5000, required=False, allow_blank=True)
        version = serializers.IntegerField(min_value=0)

    @extend_schema(
        operation_id="label_quality_decide",
        summary="Confirm or overturn a suspected label",
        description="Audited like any decision; 409 (`stale`) on an old version, 403 "
        "(`conflict_of_interest`) for a curator who voted on the item.",
        request=InputSerializer,
        responses={200: SuspectSerializer, **errors(400, 401, 403, 404, 409)},
    )
    def post(self, request, slug, item_id):
        project = _project(request, slug)
        data = validated(self, request)
        common = decision_keywords(request, project, item_id, data)
        with decision_errors():
            if data["action"] == "confirm":
                confirm_label(**common)
            else:
                overturn_label(**common)
        row = (
            ItemQuality.objects.filter(project=project, item_id=item_id)
            .select_related("item__domain", "item__verdict")
            .first()
        )
        if row is None:
            raise exceptions.NotFound("No label-quality result for this item.")
        return Response(SuspectSerializer(row).data)
