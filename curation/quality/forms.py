from django import forms

from curation.models import Evaluation, JudgeRun


class RefreshForm(forms.Form):
    """Which leaderboard entries form the model ensemble."""

    entries = forms.ModelMultipleChoiceField(
        queryset=Evaluation.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="The ensemble is the mean of their P(response 1 better); none: votes only.",
    )

    judges = forms.ModelMultipleChoiceField(
        queryset=JudgeRun.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Judges as labellers",
        help_text="Project judge runs whose votes join the analysis as extra labellers "
        "(an item's label from a judge is the side it picked in both orders).",
    )

    def __init__(self, *args, entries=None, judges=None, **kwargs):
        super().__init__(*args, **kwargs)
        if judges is not None:
            self.fields["judges"].queryset = judges
            self.fields["judges"].label_from_instance = lambda r: f"{r.name} ({r.model})"
        if entries is not None:
            self.fields["entries"].queryset = entries
            self.fields["entries"].label_from_instance = lambda e: f"{e.name} ({e.release.version})"


class ReviewForm(forms.Form):
    action = forms.ChoiceField(choices=[("confirm", "Confirm"), ("overturn", "Overturn")])
    reason = forms.CharField(required=False, max_length=5000)
    version = forms.IntegerField(min_value=0)
