"""Forms of the verdict pages: the rule's thresholds, a curator's decision, the
audit log's filter.
"""

from django import forms


class ThresholdsForm(forms.Form):
    votes_per_item = forms.IntegerField(
        min_value=1, max_value=50, help_text="Votes every item needs before a verdict."
    )
    agree_share = forms.FloatField(
        min_value=0.51,
        max_value=1.0,
        help_text="Winner share at or above which an item is agreed (e.g. 0.8).",
    )
    escalation_votes = forms.IntegerField(
        min_value=0,
        max_value=20,
        help_text="Extra votes asked once for an A-vs-B split (0: split items are contested).",
    )
    consensus_strength = forms.FloatField(
        required=False,
        min_value=0,
        max_value=3,
        label="Consensus strength",
        help_text="Graded projects (Multimodal RewardBench 2's filter): an item is agreed "
        "only when every vote is on one side and their mean strength is at least this (1 "
        "slightly, 2 better, 3 much "
        "better; e.g. 1.5); failing items are contested, never escalated. Empty: off.",
    )

    ranking_least_w = forms.FloatField(
        min_value=0,
        max_value=1,
        label="Least Kendall's W",
        help_text="Ranking projects: an item is agreed only when Kendall's W of its complete "
        "rankings is at least this (0 to 1; default 0.5), besides the share above agreeing on "
        "the top response. Lower W or a short share: escalated once, then contested.",
    )

    def __init__(self, *args, graded: bool = True, ranking: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        if not graded:
            # An A/B vote has no strength: the filter is for graded projects.
            del self.fields["consensus_strength"]
        if not ranking:  # W is the ranking rule's alone
            del self.fields["ranking_least_w"]


class DecisionForm(forms.Form):
    action = forms.ChoiceField(
        choices=[
            ("resolve", "Resolve"),
            ("exclude", "Exclude"),
            ("more_votes", "Request more votes"),
            ("reopen", "Reopen"),
        ]
    )
    choice = forms.ChoiceField(
        choices=[("", "—"), ("1", "Response 1"), ("2", "Response 2"), ("tie", "Tie")],
        required=False,
    )
    category = forms.CharField(required=False, max_length=16)
    n = forms.IntegerField(required=False, min_value=1, max_value=20)
    reason = forms.CharField(required=False, max_length=5000)
    version = forms.IntegerField(min_value=0)


class AuditFilterForm(forms.Form):
    action = forms.ChoiceField(
        required=False,
        choices=[
            ("", "Any action"),
            ("rule", "Agreement rule"),
            ("resolve", "Resolve"),
            ("exclude", "Exclude"),
            ("more_votes", "More votes"),
            ("reopen", "Reopen"),
            ("accept", "Bulk accept"),
            ("confirm", "Label confirmed (review)"),
            ("thresholds", "Thresholds changed"),
            ("item_changed", "Item changed by an admin"),
            ("release_retried", "Release build retried"),
            ("import", "Import"),
        ],
    )
    actor = forms.CharField(required=False, max_length=150, help_text="username, or 'rule'")
    item = forms.CharField(required=False, max_length=200, label="Item ID")
    since = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
