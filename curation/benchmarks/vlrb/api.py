"""Its report in the REST API: the `vlrb` section of an evaluation's detail
(cal.py's groups, micro and macro, and the counts it leaves out)."""

from __future__ import annotations

from rest_framework import serializers


class VlrbGroupSerializer(serializers.Serializer):
    group = serializers.CharField(help_text="general, hallucination or reasoning (official ids).")
    items = serializers.IntegerField(help_text="The release's pairs of the group.")
    correct = serializers.IntegerField(help_text="Pairs whose majority agrees with the humans.")
    total = serializers.IntegerField(help_text="Decided pairs (agree + reject): the denominator.")
    undecided = serializers.IntegerField(help_text="No majority ('other'): left out.")
    unparsed = serializers.IntegerField(help_text="A majority of unparsed runs: left out.")
    missing = serializers.IntegerField(help_text="Pairs without a prediction: left out.")
    accuracy = serializers.FloatField(allow_null=True)


class VlrbDatasetSerializer(serializers.Serializer):
    dataset = serializers.CharField(help_text="The source dataset of cal.py's get_dataset_from_id.")
    correct = serializers.IntegerField()
    total = serializers.IntegerField()
    accuracy = serializers.FloatField(allow_null=True)


class VlrbReportSerializer(serializers.Serializer):
    overall = serializers.FloatField(allow_null=True, help_text="Micro accuracy (cal.py).")
    macro = serializers.FloatField(
        allow_null=True, help_text="Mean of the groups' accuracies (cal.py's macro average)."
    )
    macro_groups = serializers.ListField(
        child=serializers.CharField(), help_text="The groups averaged (those with decided pairs)."
    )
    k = serializers.IntegerField(help_text="The most runs a pair has.")
    items = serializers.IntegerField()
    missing = serializers.IntegerField()
    undecided = serializers.IntegerField()
    unparsed = serializers.IntegerField()
    repeated_ids = serializers.IntegerField(help_text="Pair IDs given twice (the last counts).")
    unknown_lines = serializers.IntegerField(help_text="Lines naming no pair of the release.")
    groups = VlrbGroupSerializer(many=True)
    datasets = VlrbDatasetSerializer(many=True)
    definitions = serializers.CharField()


HELP_TEXT = "VL-RewardBench evaluations: cal.py's groups, micro and macro; null otherwise."
