"""Paginated API lists: ?page=N&page_size=M, at most MAX_PAGE_SIZE per page."""

from __future__ import annotations

from functools import cache

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.pagination import PageNumberPagination

MAX_PAGE_SIZE = 200


class Pagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE


def paginate(view, queryset, serializer_class, *, context=None):
    """One page of `queryset` as the paginated response (count, next,
    previous, results). Two queries: the count and the page."""
    paginator = Pagination()
    page = paginator.paginate_queryset(queryset, view.request, view=view)
    data = serializer_class(page, many=True, context=context or {}).data
    return paginator.get_paginated_response(data)


@cache
def paginated(serializer_class: type[serializers.Serializer]) -> type[serializers.Serializer]:
    """The schema of a page of `serializer_class` (APIViews are not generic
    views, so drf-spectacular needs to be told)."""
    from common.api.schema import component_name

    return type(
        f"Paginated{component_name(serializer_class)}ListSerializer",
        (serializers.Serializer,),
        {
            "count": serializers.IntegerField(),
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": serializer_class(many=True),
            "__module__": serializer_class.__module__,
        },
    )


# The query parameters every list takes, for extend_schema(parameters=...).
PAGE_PARAMETERS = [
    OpenApiParameter("page", int, description="Page number, from 1."),
    OpenApiParameter(
        "page_size", int, description=f"Items per page (default 50, at most {MAX_PAGE_SIZE})."
    ),
]
