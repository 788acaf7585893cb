"""Its report in the REST API: the `omni` section of an evaluation's detail
(per task, as the published scorers report; the overall is the studio's
unweighted mean of the tasks)."""

from __future__ import annotations

from rest_framework import serializers

HELP_TEXT = "Omni-RewardBench: accuracy per task by the published rules (null for others)."


class OmniReportSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text="judge (parsed verdicts) or reward (two scores).")
    with_ties = serializers.BooleanField(help_text="Whether the with-ties mode was scored.")
    tasks = serializers.JSONField(
        help_text="Per task: counts, epsilon (reward models) and accuracy, in release order."
    )
    overall = serializers.FloatField(
        allow_null=True, help_text="The unweighted mean of the tasks (the code reports none)."
    )
    repeated_ids = serializers.IntegerField()
    unknown_ids = serializers.IntegerField()
