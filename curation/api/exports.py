"""REST API of raw exports (/api/v1/): every vote (each revision, canonical
and as displayed, annotators by pseudonym) or every verdict of a project or
one domain, as CSV, JSON Lines or Parquet, streamed (curation.exports).
Curators and admins only, as the pages."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.views import APIView

from annotate.models import Domain
from common.api.errors import Conflict, errors
from curation.api.access import curated_project
from curation.exports import formats, records
from curation.exports.views import export_response


class JsonErrorsOnly(BaseContentNegotiation):
    """The body of a success is the file itself (its own content type), and
    an error is JSON: an `Accept: text/csv` must not be refused with 406
    before the export starts. (DRF's documented custom negotiation.)"""

    def select_parser(self, request, parsers):
        return parsers[0]

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class ExportQuerySerializer(serializers.Serializer):
    file_format = serializers.ChoiceField(
        choices=list(formats.FORMATS),
        required=False,
        default="csv",
        help_text="csv, jsonl (one JSON object a line) or parquet (needs the server's "
        "`parquet` extra; 409 `parquet_extra_missing` without it).",
    )
    domain = serializers.SlugField(
        required=False, help_text="One domain's slug; the whole project when left out."
    )


def _columns_text(kind: str) -> str:
    return ", ".join(f"`{name}` ({kind_})" for name, kind_ in records.COLUMNS[kind])


_FILE_RESPONSES: dict[Any, Any] = {
    (200, "text/csv"): OpenApiResponse(OpenApiTypes.BINARY, description="CSV, header first."),
    (200, "application/x-ndjson"): OpenApiResponse(OpenApiTypes.BINARY, description="JSON Lines."),
    (200, "application/vnd.apache.parquet"): OpenApiResponse(
        OpenApiTypes.BINARY, description="Parquet."
    ),
    **errors(400, 401, 403, 404, 409),
}


class _ExportApi(APIView):
    kind = ""
    content_negotiation_class = JsonErrorsOnly

    def get(self, request, slug):
        project = curated_project(request, slug)
        query = ExportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        file_format = query.validated_data["file_format"]
        domain = None
        if query.validated_data.get("domain"):
            domain = Domain.objects.filter(
                project=project, slug=query.validated_data["domain"]
            ).first()
            if domain is None:
                raise exceptions.ValidationError({"domain": ["No such domain in this project."]})
        if file_format == "parquet" and not formats.parquet_available():
            raise Conflict(formats.PARQUET_HINT, code="parquet_extra_missing")
        return export_response(
            project=project, kind=self.kind, file_format=file_format, domain=domain
        )


class VoteExportApi(_ExportApi):
    kind = "votes"

    @extend_schema(
        operation_id="exports_votes",
        summary="Every vote of the project or a domain, streamed (CSV, JSONL or Parquet)",
        description="One row per vote and revision (superseded revisions have "
        "`is_current` false), in vote order. Canonical terms (`choice`, `correct_1`, "
        "`correct_2`: response 1/2 as imported) and as displayed (`shown_left`: the "
        "response on the left; `choice_displayed`; `correct_left`, `correct_right`); "
        "annotators by their pseudonym, as in releases; no model names or item content. "
        "Columns: " + _columns_text("votes") + ".",
        parameters=[ExportQuerySerializer],
        responses=_FILE_RESPONSES,
    )
    def get(self, request, slug):
        return super().get(request, slug)


class VerdictExportApi(_ExportApi):
    kind = "verdicts"

    @extend_schema(
        operation_id="exports_verdicts",
        summary="Every verdict of the project or a domain, streamed (CSV, JSONL or Parquet)",
        description="One row per item, in item order, with its current tallies; "
        "`decided_by` is the curator's pseudonym (empty when the rule decided). "
        "Columns: " + _columns_text("verdicts") + ".",
        parameters=[ExportQuerySerializer],
        responses=_FILE_RESPONSES,
    )
    def get(self, request, slug):
        return super().get(request, slug)
