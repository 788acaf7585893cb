"""Its report in the REST API: the `mmrlhf` section of an evaluation's
detail (Acc and Acc+ overall and per category, as get_acc.py counts)."""

from __future__ import annotations

from rest_framework import serializers


class MmrlhfTallySerializer(serializers.Serializer):
    pairs = serializers.IntegerField(help_text="Pairs of the release's file.")
    correct = serializers.IntegerField(help_text="Pairs with rewards[0] > rewards[1].")
    missing = serializers.IntegerField(help_text="Pairs without a prediction (wrong).")
    groups = serializers.IntegerField(help_text="Prompt ids.")
    groups_correct = serializers.IntegerField(help_text="Prompt ids whose pairs are all right.")
    acc = serializers.FloatField(allow_null=True, help_text="correct / pairs.")
    acc_plus = serializers.FloatField(allow_null=True, help_text="groups_correct / groups.")


class MmrlhfCategorySerializer(MmrlhfTallySerializer):
    category = serializers.CharField(help_text="The media path's first folder (mcq, long, …).")


class MmrlhfReportSerializer(MmrlhfTallySerializer):
    categories = MmrlhfCategorySerializer(many=True)
    unknown_ids = serializers.IntegerField(help_text="Prediction lines of ids not in the file.")
    extra_lines = serializers.IntegerField(help_text="Lines past an id's pairs (not scored).")
    definitions = serializers.CharField()


HELP_TEXT = (
    "MM-RLHF-RewardBench evaluations: Acc and Acc+ overall and per category; null otherwise."
)
