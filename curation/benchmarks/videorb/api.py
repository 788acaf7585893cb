"""Its report in the REST API: the `videorb` section of an evaluation's
detail (accuracy overall, macro and per dimension)."""

from __future__ import annotations

from rest_framework import serializers


class VideorbTallySerializer(serializers.Serializer):
    samples = serializers.IntegerField(help_text="Samples of the release's file.")
    correct = serializers.IntegerField(help_text="Samples with chosen_score > rejected_score.")
    missing = serializers.IntegerField(help_text="Samples without a prediction (wrong).")
    accuracy = serializers.FloatField(allow_null=True, help_text="correct / samples.")


class VideorbDimensionSerializer(VideorbTallySerializer):
    dimension = serializers.CharField(help_text="long_form_perception, …, safety.")


class VideorbReportSerializer(VideorbTallySerializer):
    macro_accuracy = serializers.FloatField(
        allow_null=True, help_text="Mean of the dimensions' accuracies."
    )
    dimensions = VideorbDimensionSerializer(many=True)
    unknown_ids = serializers.IntegerField(help_text="Prediction lines of ids not in the file.")
    definitions = serializers.CharField()


HELP_TEXT = (
    "VideoRewardBench-style evaluations: accuracy overall, macro and per dimension; null otherwise."
)
