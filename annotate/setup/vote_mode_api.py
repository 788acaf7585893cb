"""The project API's vote-mode fields (issue 36 item 5), kept apart so the
project serializers' module stays short; changed through curation's
/api/v1/projects/<slug>/adaptive/."""

from rest_framework import serializers

from annotate.models import VoteMode


class VoteModeOutput(serializers.Serializer):
    vote_mode = serializers.ChoiceField(
        choices=VoteMode.choices,
        help_text="fixed: votes_per_item per item; adaptive: see `adaptive` (changed at "
        "/api/v1/projects/<slug>/adaptive/).",
    )
    adaptive = serializers.DictField(
        source="adaptive_settings",
        help_text="The adaptive rule's parameters and, in adaptive mode, the rule in plain words.",
    )
