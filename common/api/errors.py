"""The API's one error format, for every status it answers with:

    {"error": {"code": "validation_error", "message": "...", "fields": {"name": ["..."]}}}

`fields` is always present (empty when no field is to blame); import failures
add `problems`, one per file/line/field. DRF's exceptions, Django's 404/403,
an oversized body (413) and URLs under /api/ that match no route all come out
in this shape.
"""

from __future__ import annotations

import io

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import Http404, JsonResponse
from drf_spectacular.utils import OpenApiResponse
from rest_framework import exceptions, parsers, serializers, status
from rest_framework.response import Response
from rest_framework.views import set_rollback

from common import error_pages

API_PREFIX = "/api/"


class Conflict(exceptions.APIException):
    """The request is valid but the current state refuses it (409)."""

    status_code = status.HTTP_409_CONFLICT
    default_detail = "The request conflicts with the current state."
    default_code = "conflict"


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "too_large"


class Rejected(exceptions.APIException):
    """A 400 with a message of our own (a rule the service enforces) and,
    optionally, field errors and import problems."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "invalid"

    def __init__(self, message: str, *, code: str = "invalid", fields=None, problems=None):
        super().__init__(message, code)
        self.code = code
        self.fields = fields or {}
        self.problems = problems


class BoundedJSONParser(parsers.JSONParser):
    """JSON bodies up to DATA_UPLOAD_MAX_MEMORY_SIZE, else 413. DRF reads the
    request stream itself, bypassing Django's own check of that limit."""

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        request = (parser_context or {}).get("request")
        if limit is not None and request is not None:
            length = request.META.get("CONTENT_LENGTH") or 0
            try:
                too_big = int(length) > limit
            except ValueError:
                too_big = False
            if too_big:
                raise PayloadTooLarge(f"The request body is larger than {limit} bytes.")
            if stream is not None:
                # Read one byte past the limit in case the length was not declared.
                data = stream.read(limit + 1)
                if len(data) > limit:
                    raise PayloadTooLarge(f"The request body is larger than {limit} bytes.")
                stream = io.BytesIO(data)
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise exceptions.ParseError(
                "JSON parse error - values are nested too deeply."
            ) from None


def _flatten(detail, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested error detail → {"field" or "field.sub" or "field.0": [messages]}."""
    out: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            for k, v in _flatten(value, name).items():
                out.setdefault(k, []).extend(v)
    elif isinstance(detail, list):
        if all(not isinstance(v, dict | list) for v in detail):
            out[prefix or "non_field_errors"] = [str(v) for v in detail]
        else:
            for i, value in enumerate(detail):
                for k, v in _flatten(value, f"{prefix}.{i}" if prefix else str(i)).items():
                    out.setdefault(k, []).extend(v)
    else:
        out[prefix or "non_field_errors"] = [str(detail)]
    return out


def error_body(code: str, message: str, fields=None, problems=None) -> dict:
    body = {"code": code, "message": message, "fields": fields or {}}
    if problems is not None:
        body["problems"] = problems
    return {"error": body}


def exception_handler(exc, context):
    """REST_FRAMEWORK["EXCEPTION_HANDLER"]: every refusal in the one format."""
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or "Not found.")
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or "You do not have permission.")
    elif isinstance(exc, RequestDataTooBig):
        exc = PayloadTooLarge("The request body is larger than the server accepts.")
    elif isinstance(exc, SuspiciousOperation):
        exc = exceptions.ParseError(str(exc) or "Malformed request.")
    if not isinstance(exc, exceptions.APIException):
        return None  # a real bug: Django's 500 handler (JSON under /api/)

    headers = {}
    if getattr(exc, "auth_header", None):
        headers["WWW-Authenticate"] = exc.auth_header
    if getattr(exc, "wait", None):
        headers["Retry-After"] = str(int(exc.wait))

    problems = None
    if isinstance(exc, Rejected):
        code, message, fields, problems = exc.code, str(exc.detail), exc.fields, exc.problems
    elif isinstance(exc, exceptions.ValidationError):
        fields = _flatten(exc.detail)
        general = fields.pop("non_field_errors", [])
        code = "validation_error"
        message = " ".join(general) if general else "Some fields are invalid."
    else:
        detail = exc.detail
        code = detail.code if isinstance(detail, exceptions.ErrorDetail) else exc.default_code
        message = str(detail) if not isinstance(detail, dict | list) else str(exc.default_detail)
        fields = {}
        if isinstance(detail, dict | list):
            fields = _flatten(detail)
    set_rollback()
    return Response(
        error_body(str(code), message, fields, problems), status=exc.status_code, headers=headers
    )


# --- Django-level handlers (config.urls): URLs under /api/ that no view matched -------------


def not_found(request, exception=None):
    if request.path.startswith(API_PREFIX):
        return JsonResponse(error_body("not_found", "No such API endpoint."), status=404)
    return error_pages.page_not_found(request, exception)


def forbidden(request, exception=None):
    if request.path.startswith(API_PREFIX):
        message = str(exception or "") or "You do not have permission."
        return JsonResponse(error_body("permission_denied", message), status=403)
    return error_pages.permission_denied(request, exception)


def bad_request(request, exception=None):
    if request.path.startswith(API_PREFIX):
        return JsonResponse(error_body("bad_request", "Malformed request."), status=400)
    return error_pages.bad_request(request, exception)


def server_error(request):
    if request.path.startswith(API_PREFIX):
        return JsonResponse(
            error_body("server_error", "Internal server error; it has been logged."), status=500
        )
    return error_pages.server_error(request)


# --- For the schema ------------------------------------------------------------------------


class ImportProblemSerializer(serializers.Serializer):
    file = serializers.CharField()
    line = serializers.IntegerField(allow_null=True)
    index = serializers.IntegerField(allow_null=True, help_text="Record number in the file.")
    field = serializers.CharField(allow_null=True)
    message = serializers.CharField()
    count = serializers.IntegerField(
        help_text="How many records (or lines) have this same problem (1 if only this one)."
    )
    records = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="The record numbers of the first few of them (empty for file-level problems).",
    )


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Machine-readable, e.g. not_found, validation_error.")
    message = serializers.CharField()
    fields = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="Messages per request field (empty when no field is to blame).",
    )
    problems = ImportProblemSerializer(
        many=True, required=False, help_text="Import only: every problem found in the files."
    )


class ErrorSerializer(serializers.Serializer):
    error = ErrorDetailSerializer()


def errors(*codes: int) -> dict[int, OpenApiResponse]:
    """The error responses an endpoint can give, for extend_schema(responses=...)."""
    text = {
        400: "Invalid request (field errors in `fields`).",
        401: "Not authenticated.",
        403: "Your role in this project does not allow this.",
        404: "No such project or object (or you are not a member).",
        405: "Method not allowed.",
        409: "The current state refuses the request.",
        413: "The upload is too large.",
    }
    return {c: OpenApiResponse(ErrorSerializer, description=text[c]) for c in codes}
