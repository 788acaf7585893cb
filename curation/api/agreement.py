"""REST API of agreement (/api/v1/): the dashboard's figures per domain, and
queueing their background refresh (curation.agreement.reports).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.projects import CURATOR_ROLES, member_of
from common.api.errors import errors
from common.body_guard import guard_body
from curation.agreement import values as agreement  # no numpy: issue 32
from curation.api.access import curated_project

if TYPE_CHECKING:
    from curation.agreement.stats import Reliability


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
    ac1 = StatSerializer(
        help_text="Gwet's AC1 over the categories the project's scale can produce: choices "
        "1 / 2 / tie with a tie (A/B allowing ties, graded7), 1 / 2 without (graded6, A/B "
        "without ties); correctness yes / no / unsure."
    )
    pairwise_agreement = StatSerializer()
    n_units = serializers.IntegerField()
    n_values = serializers.IntegerField()
    n_pairable = serializers.IntegerField()
    rates = serializers.DictField(child=StatSerializer(), help_text="Share of each category.")


def _reliability(r: Reliability, ci) -> dict:
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
    alpha_ordinal_ci95 = IntervalSerializer(
        allow_null=True,
        help_text="Item-bootstrap 95% interval of alpha_ordinal; null until computed.",
    )
    alpha_interval_ci95 = IntervalSerializer(
        allow_null=True,
        help_text="Item-bootstrap 95% interval of alpha_interval; null until computed.",
    )
    alpha_binary_ci95 = IntervalSerializer(
        allow_null=True,
        help_text="Item-bootstrap 95% interval of alpha_binary (choice.alpha_ci95).",
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
        "alpha_ordinal_ci95": _interval(row.ordinal_ci),
        "alpha_interval_ci95": _interval(row.interval_ci),
        "alpha_binary_ci95": _interval(row.binary_ci),
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
        from curation.agreement import reports  # numpy: loaded where used (issue 32)

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


@guard_body(member_of(CURATOR_ROLES))
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
        from curation.agreement.reports import request_agreement_refresh

        project = curated_project(request, slug)
        queued = request_agreement_refresh(project=project)
        return Response(self.OutputSerializer({"queued": queued}).data, status=202)


# --- per annotator ----------------------------------------------------------------------


class ConsensusSerializer(serializers.Serializer):
    agreement = StatSerializer(help_text="Share of values equal to the leave-one-out majority.")
    kappa = StatSerializer(help_text="Cohen's kappa against the leave-one-out majority.")
    n_compared = serializers.IntegerField(
        help_text="Values whose unit has a leave-one-out majority."
    )
    alpha_delta = StatSerializer(
        allow_null=True,
        help_text="Alpha without this annotator minus alpha with everyone (positive: the "
        "others agree better without them), from the cached background computation; null "
        "until it has run.",
    )


class AnnotatorStatsSerializer(serializers.Serializer):
    annotator = serializers.CharField(help_text="The annotator's pseudonym in this project.")
    votes = serializers.IntegerField()
    choice = ConsensusSerializer(help_text="On canonical choices 1 / 2 / tie.")
    correctness = ConsensusSerializer(help_text="On correctness labels (item x response).")
    gold_accuracy = StatSerializer()
    gold_items = serializers.IntegerField()
    left_pick_rate = StatSerializer(
        help_text="Non-tie votes for the response displayed on the left."
    )
    left_pick_ci95 = IntervalSerializer(help_text="Wilson score interval.")
    sided_votes = serializers.IntegerField(help_text="Non-tie votes: the left-pick denominator.")
    left_pick_p = StatSerializer(
        help_text="Exact two-sided binomial test of a 50% left-pick rate (undefined below "
        "min_side_votes non-tie votes)."
    )
    left_pick_p_adjusted = StatSerializer(
        help_text="Benjamini-Hochberg adjusted over the project's tested annotators."
    )
    side_bias = serializers.BooleanField(
        help_text="Adjusted p-value below side_bias_fdr: this annotator favours one side."
    )
    tie_rate = StatSerializer()
    median_seconds = StatSerializer(help_text="Median seconds per item.")
    crowdlab_quality = serializers.FloatField(
        allow_null=True,
        help_text="CROWDLAB annotator quality from the last label-quality analysis; null "
        "before one.",
    )


def _cached(value) -> dict | None:
    """A figure of the background computation: None while not computed."""
    return None if value is None else _stat(value)


def _interval_now(value) -> dict:
    return _interval(value) or {"low": None, "high": None, "undefined": "not computed"}


def annotator_stats_rows(report, crowdlab: dict) -> list[dict]:
    """The agreement page's annotator table (reports.build_report's rows),
    every figure as the page and its CSV show it, none derived again here."""
    rows = []
    for r in report.annotators:
        s = r.stats
        rows.append(
            {
                "annotator": r.name,
                "votes": s.n_votes,
                "choice": {
                    "agreement": _stat(s.choice.agreement),
                    "kappa": _stat(s.choice.kappa),
                    "n_compared": s.choice.n_compared,
                    "alpha_delta": _cached(r.alpha_delta),
                },
                "correctness": {
                    "agreement": _stat(s.correctness.agreement),
                    "kappa": _stat(s.correctness.kappa),
                    "n_compared": s.correctness.n_compared,
                    "alpha_delta": _cached(r.correctness_alpha_delta),
                },
                "gold_accuracy": _stat(s.gold_accuracy),
                "gold_items": s.n_gold,
                "left_pick_rate": _stat(s.left_pick_rate),
                "left_pick_ci95": _interval_now(s.left_pick_ci),
                "sided_votes": s.n_sided,
                "left_pick_p": _stat(s.left_pick_p),
                "left_pick_p_adjusted": _stat(s.left_pick_p_adjusted),
                "side_bias": r.left_bias,
                "tie_rate": _stat(s.tie_rate),
                "median_seconds": _stat(s.median_seconds),
                "crowdlab_quality": crowdlab.get(r.annotator_id),
            }
        )
    return rows


class AnnotatorStatsApi(APIView):
    class OutputSerializer(serializers.Serializer):
        project = serializers.SlugField()
        alpha_delta_computed_at = serializers.DateTimeField(
            allow_null=True, help_text="When the cached changes in alpha were computed."
        )
        alpha_delta_stale = serializers.BooleanField(
            help_text="Votes arrived since they were computed (POST agreement/refresh/)."
        )
        min_side_votes = serializers.IntegerField(
            help_text="Non-tie votes an annotator needs before the side test runs."
        )
        side_bias_fdr = serializers.FloatField(
            help_text="False discovery rate of the Benjamini-Hochberg adjustment."
        )
        crowdlab_computed_at = serializers.DateTimeField(allow_null=True)
        annotators = AnnotatorStatsSerializer(many=True)

    @extend_schema(
        operation_id="agreement_annotators",
        summary="Per-annotator statistics: the agreement page's annotator table",
        description="Votes, agreement and Cohen's kappa against the leave-one-out majority, "
        "change in alpha without the annotator, gold accuracy, left-pick rate with its "
        "Wilson interval and the exact binomial side test (Benjamini-Hochberg adjusted over "
        "the project's annotators), tie rate, median seconds, CROWDLAB quality. The same "
        "numbers as the page and its CSV.",
        responses={200: OutputSerializer, **errors(401, 403, 404)},
    )
    def get(self, request, slug):
        from curation.agreement import reports
        from curation.agreement.diagnostics import MIN_SIDE_VOTES, SIDE_BIAS_FDR
        from curation.quality.service import annotator_quality

        project = curated_project(request, slug)
        report = reports.build_report(project)
        crowdlab, crowdlab_at = annotator_quality(project)
        cache = report.cache
        body = {
            "project": project.slug,
            "alpha_delta_computed_at": cache.computed_at if cache else None,
            "alpha_delta_stale": report.stale,
            "min_side_votes": MIN_SIDE_VOTES,
            "side_bias_fdr": SIDE_BIAS_FDR,
            "crowdlab_computed_at": crowdlab_at,
            "annotators": annotator_stats_rows(report, crowdlab),
        }
        return Response(self.OutputSerializer(body).data)
