"""REST API of the check and qualification items curators make from settled
items (curation.gold): list, make one, edit its explanation, retire it.
Curators and admins only; the same rules as the pages (the service's)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.models import Item
from annotate.projects import CURATOR_ROLES, member_of
from common.api.errors import Conflict, errors
from common.api.input import validated
from common.api.paging import PAGE_PARAMETERS, Pagination, paginated
from common.body_guard import guard_body
from curation.api.access import curated_project
from curation.gold.service import (
    EXPLANATION_MAX,
    GOLD_PURPOSES,
    edit_explanation,
    gold_items,
    gold_rows,
    make_gold_item,
    retire_gold_item,
)
from curation.models import Verdict
from curation.verdicts.decisions import CurationError


class GoldItemSerializer(serializers.Serializer):
    item_id = serializers.IntegerField(source="item.pk")
    external_id = serializers.CharField(source="item.external_id")
    purpose = serializers.CharField(source="item.purpose", help_text="check | qualification")
    gold_choice = serializers.CharField(source="item.gold_choice", help_text='"1" or "2".')
    is_attention = serializers.BooleanField(source="item.is_attention")
    explanation = serializers.CharField(source="item.explanation", help_text="Markdown.")
    copied_from = serializers.IntegerField(
        source="item.copied_from_id",
        allow_null=True,
        help_text="The benchmark item it was made from; null for an imported one.",
    )
    retired_at = serializers.DateTimeField(source="item.retired_at", allow_null=True)
    drifted = serializers.BooleanField(
        help_text="The source's verdict no longer names this gold (reopened or overturned)."
    )


def _row(item: Item) -> dict:
    return gold_rows([Item.objects.select_related("copied_from__verdict").get(pk=item.pk)])[0]


def _reason_field(required: bool = True):
    return serializers.CharField(
        max_length=2000,
        required=required,
        allow_blank=not required,
        default=serializers.empty if required else "",
        help_text="Goes into the audit log" + (" (required)." if required else "."),
    )


def _explanation_field(**kwargs):
    return serializers.CharField(
        max_length=EXPLANATION_MAX,
        allow_blank=True,
        trim_whitespace=True,
        help_text="Markdown, sanitised when shown after a qualification answer.",
        **kwargs,
    )


@guard_body(member_of(CURATOR_ROLES))
class GoldItemListApi(APIView):
    class InputSerializer(serializers.Serializer):
        item_id = serializers.IntegerField(
            min_value=1, help_text="A benchmark item whose verdict is agreed or resolved."
        )
        purpose = serializers.ChoiceField(choices=list(GOLD_PURPOSES))
        explanation = _explanation_field(required=False, default="")
        is_attention = serializers.BooleanField(required=False, default=False)
        reason = _reason_field()

    @extend_schema(
        operation_id="gold_items_list",
        summary="The project's check and qualification items (made or imported)",
        responses={200: paginated(GoldItemSerializer), **errors(401, 403, 404)},
        parameters=PAGE_PARAMETERS,
    )
    def get(self, request, slug):
        project = curated_project(request, slug)
        paginator = Pagination()
        page = paginator.paginate_queryset(gold_items(project), request, view=self)
        data = GoldItemSerializer(gold_rows(page), many=True).data
        return paginator.get_paginated_response(data)

    @extend_schema(
        operation_id="gold_items_create",
        summary="Make a check or qualification item from a settled item (a copy; audited)",
        request=InputSerializer,
        responses={201: GoldItemSerializer, **errors(400, 401, 403, 404, 409)},
    )
    def post(self, request, slug):
        project = curated_project(request, slug)
        data = validated(self, request)
        try:
            copy = make_gold_item(project=project, curator=request.user, **data)
        except Verdict.DoesNotExist:
            raise exceptions.NotFound("No such benchmark item in this project.") from None
        except CurationError as refused:
            raise Conflict(f"Nothing was made: {refused}") from None
        return Response(GoldItemSerializer(_row(copy)).data, status=201)


def _gate_call(act, **kwargs):
    try:
        return act(**kwargs)
    except Item.DoesNotExist:
        raise exceptions.NotFound("No such check or qualification item.") from None
    except CurationError as refused:
        raise Conflict(f"Nothing was changed: {refused}") from None


def _changed(view, request, slug, item_id, act):
    """A curator's change to one check or qualification item, answered with its row."""
    project = curated_project(request, slug)
    data = validated(view, request)
    item = _gate_call(act, project=project, item_id=item_id, curator=request.user, **data)
    return Response(GoldItemSerializer(_row(item)).data)


@guard_body(member_of(CURATOR_ROLES))
class GoldItemDetailApi(APIView):
    class InputSerializer(serializers.Serializer):
        explanation = _explanation_field()
        reason = _reason_field(required=False)

    @extend_schema(
        operation_id="gold_items_edit",
        summary="Replace a check or qualification item's explanation (audited)",
        request=InputSerializer,
        responses={200: GoldItemSerializer, **errors(400, 401, 403, 404, 409)},
    )
    def patch(self, request, slug, item_id):
        return _changed(self, request, slug, item_id, edit_explanation)


@guard_body(member_of(CURATOR_ROLES))
class GoldItemRetireApi(APIView):
    class InputSerializer(serializers.Serializer):
        reason = _reason_field()

    @extend_schema(
        operation_id="gold_items_retire",
        summary="Retire a check or qualification item: never served again (audited)",
        request=InputSerializer,
        responses={200: GoldItemSerializer, **errors(400, 401, 403, 404, 409)},
    )
    def post(self, request, slug, item_id):
        return _changed(self, request, slug, item_id, retire_gold_item)
