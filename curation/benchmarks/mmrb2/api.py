"""Its report in the REST API: the `mmrb2` section of an evaluation's detail
(per task, per prompt_source and overall), as compute_accuracy.py counts."""

from __future__ import annotations

from rest_framework import serializers


class Mmrb2TallySerializer(serializers.Serializer):
    total_pairs = serializers.IntegerField()
    evaluated_pairs = serializers.IntegerField(help_text="Pairs with an entry in the file.")
    missing_pairs = serializers.IntegerField(help_text="Pairs of the task file not predicted.")
    correct = serializers.IntegerField()
    judged = serializers.IntegerField(help_text="Judgements evaluated (forward + reverse).")
    accuracy = serializers.FloatField(help_text="correct / judged (0.0 when none).")
    percent = serializers.CharField(help_text="100 x accuracy to two decimals, as printed.")


class Mmrb2SourceSerializer(Mmrb2TallySerializer):
    source = serializers.CharField(help_text="The pairs' prompt_source.")


class Mmrb2TaskSerializer(Mmrb2TallySerializer):
    task = serializers.CharField(help_text="The task file's name (t2i, edit, ...).")
    by_source = Mmrb2SourceSerializer(many=True)


class Mmrb2ReportSerializer(serializers.Serializer):
    tasks = Mmrb2TaskSerializer(many=True)
    overall = Mmrb2TallySerializer(help_text="Pooled over the tasks' judgements.")
    unknown_ids = serializers.IntegerField(help_text="Predicted IDs in no task file.")
    repeated_ids = serializers.IntegerField(help_text="IDs given twice (the last counts).")
    summary = serializers.ListField(
        child=serializers.CharField(), help_text="The official summary table's lines."
    )


HELP_TEXT = "MMRB2 evaluations: per task, per prompt_source and overall; null otherwise."
