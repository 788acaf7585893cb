"""REST API of agreement (/api/v1/): the dashboard's figures per domain, and
queueing their background refresh (curation.agreement.reports).
"""

from __future__ import annotations

import math

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from common.api.errors import errors
from curation.agreement import reports
from curation.agreement import stats as agreement
from curation.agreement.reports import request_agreement_refresh
from curation.api.access import curated_project


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


class GradedSerializer(serializers.Serializer):
    scale = serializers.CharField(help_text="graded6 or graded7.")
    alpha_ordinal = StatSerializer(
        help_text="Krippendorff's alpha, level_of_measurement='ordinal', over the points "
        "oriented to response 1."
    )
    alpha_interval = StatSerializer(
        help_text="Krippendorff's alpha, level_of_measurement='interval' (points as equally "
        "spaced numbers)."
    )
    alpha_binary = StatSerializer(
        help_text="The binary collapse: nominal alpha of the choices 1 / 2 / tie (as `choice`)."
    )
    mean_strength = StatSerializer(help_text="Mean |strength|: 1 slightly … 3 much better.")
    n_values = serializers.IntegerField()
    n_pairable = serializers.IntegerField()


def _graded(row, scale: str) -> dict:
    r = row.reliability
    return {
        "scale": scale,
        "alpha_ordinal": _stat(r.ordinal),
        "alpha_interval": _stat(r.interval),
        "alpha_binary": _stat(row.binary_alpha),
        "mean_strength": _stat(r.mean_strength),
        "n_values": r.n_values,
        "n_pairable": r.n_pairable,
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
    graded = GradedSerializer(
        allow_null=True, help_text="Graded projects: agreement on the scale; null for A/B."
    )


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
        project = curated_project(request, slug)
        report = reports.build_report(project)
        cache = report.cache
        graded = {row.key: row for row in report.graded}
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
                    "graded": (
                        _graded(graded[row.key], project.preference_scale)
                        if row.key in graded
                        else None
                    ),
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
        project = curated_project(request, slug)
        queued = request_agreement_refresh(project=project)
        return Response(self.OutputSerializer({"queued": queued}).data, status=202)
