"""Its report in the REST API: the fields every evaluation shows of an MRB
report (the overall accuracy's interval, the macro average, the coverage)
and those its detail adds (the official scorer's table, the extras), read
from the report as curation.benchmarks.mrb.scoring_output stores it."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from rest_framework import serializers

from curation.benchmarks.base import ApiField


class MacroAverageSerializer(serializers.Serializer):
    value = serializers.FloatField(allow_null=True)
    ci95 = serializers.ListField(
        child=serializers.FloatField(), allow_null=True, help_text="[low, high]"
    )


class GroupSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="all, a Category, or a sub-bucket (reasoning/math).")
    level = serializers.CharField()
    correct = serializers.IntegerField()
    total = serializers.IntegerField()
    accuracy = serializers.FloatField(allow_null=True)


def _extras(report: dict) -> dict:
    return report.get("extras", {})


def _macro_average(report: dict) -> dict | None:
    macro = _extras(report).get("macro_average")
    return {"value": macro.get("value"), "ci95": macro.get("ci95")} if macro else None


def _coverage_count(key: str):
    def read(report: dict) -> int | None:
        coverage = _extras(report).get("coverage")
        return len(coverage.get(key, [])) if coverage else None

    return read


def api_fields() -> dict[str, ApiField]:
    return {
        "accuracy_ci95": ApiField(
            read=lambda report: _extras(report).get("ci95", {}).get("all"),
            schema=serializers.ListField(child=serializers.FloatField(), allow_null=True),
            help_text="Extra: Wilson 95% interval [low, high] of the overall accuracy (null: "
            "none, e.g. Multimodal RewardBench 2).",
        ),
        "macro_average": ApiField(
            read=_macro_average,
            schema=MacroAverageSerializer(allow_null=True),
            help_text="Extra: the mean of the per-Category accuracies and its stratified "
            "bootstrap 95% interval: {value, ci95: [low, high]} (null for Multimodal "
            "RewardBench 2).",
        ),
        "missing_ids": ApiField(
            read=_coverage_count("missing"),
            schema=serializers.IntegerField(allow_null=True),
            help_text="Extra: release items without a prediction.",
        ),
        "unknown_ids": ApiField(
            read=_coverage_count("unknown"),
            schema=serializers.IntegerField(allow_null=True),
            help_text="Extra: prediction lines whose ID is not in the release.",
        ),
        "per_category": ApiField(
            read=lambda report: report.get("official", {}).get("groups", []),
            schema=GroupSerializer(many=True),
            help_text="The official scorer's table: overall, per Category, per sub-bucket.",
            detail=True,
        ),
        "extras": ApiField(
            read=_extras,
            schema=OpenApiTypes.OBJECT,
            help_text="Not part of the official score: macro average, 95% CIs, coverage, "
            "position bias and consistency.",
            detail=True,
        ),
    }
