"""REST API of the data grid (/api/v1/projects/<slug>/items/): every item of
the project with the grid's filters and sorts (curation.grid.filters, the
same code the page runs), and its bulk actions. Curators and admins only."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.projects import CURATOR_ROLES, member_of
from common.api.errors import Rejected, errors
from common.api.paging import PAGE_PARAMETERS, Pagination, paginated
from common.body_guard import guard_body
from curation.api.access import curated_project
from curation.api.verdicts import VerdictSerializer
from curation.gold.service import EXPLANATION_MAX
from curation.grid.bulk import ACTIONS, MAX_BULK_ITEMS, apply_bulk
from curation.grid.filters import SORT_LABELS, GridFilterForm, GridRows, decorate
from curation.models import ContestKind, ExclusionCategory, VerdictStatus
from curation.verdicts.decisions import CurationError


class ItemRowSerializer(serializers.Serializer):
    item_id = serializers.IntegerField()
    external_id = serializers.CharField(source="item.external_id")
    prompt_snippet = serializers.SerializerMethodField(
        help_text="The prompt's text, cut to 200 characters."
    )
    domain = serializers.SlugField(source="item.domain.slug")
    status = serializers.ChoiceField(choices=VerdictStatus.choices)
    final_choice = serializers.CharField()
    contest_kind = serializers.ChoiceField(choices=ContestKind.choices)
    exclusion_category = serializers.ChoiceField(choices=ExclusionCategory.choices)
    votes = VerdictSerializer.VotesSerializer(source="item", help_text="Current votes, canonical.")
    votes_needed = serializers.IntegerField(source="item.votes_needed")
    winner_share = serializers.FloatField(
        help_text="Share of the votes given to the most voted answer (0 without votes)."
    )
    flagged_problem = serializers.BooleanField(help_text="A current vote flags a problem.")
    has_gold = serializers.SerializerMethodField()
    group = serializers.CharField(
        source="item.group_key", help_text='The item\'s group key ("" for none).'
    )
    criterion = serializers.CharField(
        source="item.criterion", help_text='The question asked of the item ("" for none).'
    )
    thumbnail = serializers.CharField(
        allow_null=True, help_text="URL of the item's first picture's thumbnail (signed in)."
    )
    version = serializers.IntegerField()
    updated_at = serializers.DateTimeField()

    def get_prompt_snippet(self, v) -> str:
        text = v.item.prompt
        return text if len(text) <= 200 else text[:199] + "…"

    def get_has_gold(self, v) -> bool:
        return bool(v.item.gold_choice)


def _filter_parameters() -> list[OpenApiParameter]:
    """The grid form's fields as query parameters (one definition)."""
    types = {"IntegerField": int, "FloatField": float, "TypedChoiceField": int}
    params = []
    for name, field in GridFilterForm.base_fields.items():
        if name == "page_size":
            continue  # (PAGE_PARAMETERS's)
        choices = [str(c[0]) for c in getattr(field, "choices", []) if c[0] != ""] or None
        if name == "domain":
            choices = None  # (the project's own domain slugs)
        params.append(
            OpenApiParameter(
                name,
                types.get(type(field).__name__, str),
                enum=choices,
                description=str(field.help_text or field.label or name),
            )
        )
    return params


class ItemGridApi(APIView):
    @extend_schema(
        operation_id="items_list",
        summary="Every item of the project with the data grid's filters (curators)",
        description="Filters: " + "; ".join(f"sort={k}: {v}" for k, v in SORT_LABELS.items()),
        parameters=[*_filter_parameters(), *PAGE_PARAMETERS],
        responses={200: paginated(ItemRowSerializer), **errors(400, 401, 403, 404)},
    )
    def get(self, request, slug):
        project = curated_project(request, slug)
        params = request.query_params.copy()
        params.pop("page_size", None)  # (the API's paging, below, takes any size)
        form = GridFilterForm(params, project=project)
        if not form.is_valid():
            raise Rejected(
                "Invalid filter.",
                code="validation_error",
                fields={k: [str(e) for e in v] for k, v in form.errors.items()},
            )
        paginator = Pagination()
        rows = paginator.paginate_queryset(GridRows(project, form.cleaned_data), request, self)
        decorate(rows)
        for v in rows:
            v.thumbnail = (
                request.build_absolute_uri(reverse("media", args=[v.thumb])) if v.thumb else None
            )
            v.flagged_problem = v.flagged
        return paginator.get_paginated_response(ItemRowSerializer(rows, many=True).data)


@guard_body(member_of(CURATOR_ROLES))
class ItemBulkApi(APIView):
    class InputSerializer(serializers.Serializer):
        action = serializers.ChoiceField(choices=list(ACTIONS))
        item_ids = serializers.ListField(
            child=serializers.IntegerField(min_value=1),
            max_length=MAX_BULK_ITEMS,
            help_text=f"The items to act on (at most {MAX_BULK_ITEMS}).",
        )
        reason = serializers.CharField(max_length=2000, help_text="Required; audited per item.")
        category = serializers.ChoiceField(
            choices=[c for c in ExclusionCategory.values if c],
            required=False,
            help_text="exclude: why.",
        )
        n = serializers.IntegerField(
            min_value=1, max_value=20, required=False, default=1, help_text="more_votes: how many."
        )
        domain = serializers.SlugField(required=False, help_text="move_domain: the target domain.")
        explanation = serializers.CharField(
            required=False,
            allow_blank=True,
            max_length=EXPLANATION_MAX,
            help_text="make_check, make_qualification: Markdown shown after an answer.",
        )
        is_attention = serializers.BooleanField(
            required=False, default=False, help_text="make_check: an attention check."
        )

    class OutputSerializer(serializers.Serializer):
        done = serializers.IntegerField()
        skipped = serializers.DictField(
            child=serializers.IntegerField(), help_text="Why items were skipped -> how many."
        )
        message = serializers.CharField()

    @extend_schema(
        operation_id="items_bulk",
        summary=(
            "Exclude, reopen, ask for more votes, move, or make check or qualification "
            "items of many items (one audit entry each)"
        ),
        request=InputSerializer,
        responses={200: OutputSerializer, **errors(400, 401, 403, 404)},
    )
    def post(self, request, slug):
        project = curated_project(request, slug)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        domain = None
        if d.get("domain"):
            domain = project.domains.filter(slug=d["domain"]).first()
            if domain is None:
                raise Rejected("No such domain.", fields={"domain": ["No such domain."]})
        try:
            outcome = apply_bulk(
                project=project,
                curator=request.user,
                action=d["action"],
                item_ids=d["item_ids"],
                reason=d["reason"],
                category=d.get("category", ""),
                n=d.get("n", 1),
                domain=domain,
                explanation=d.get("explanation", ""),
                is_attention=d["is_attention"],
            )
        except CurationError as refused:
            raise Rejected(str(refused)) from None
        return Response(
            {"done": outcome.done, "skipped": dict(outcome.skipped), "message": outcome.summary()}
        )
