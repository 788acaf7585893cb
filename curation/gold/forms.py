"""Forms of the check and qualification items a curator makes (curation.gold):
the same fields and limits as the API's serializers."""

from __future__ import annotations

from django import forms

from curation.gold.service import EXPLANATION_MAX

PURPOSE_CHOICES = [
    ("check", "Check item (served among benchmark items, scored against gold)"),
    ("qualification", "Qualification item (a newcomer answers it before working)"),
]


class ExplanationField(forms.CharField):
    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("max_length", EXPLANATION_MAX)
        kwargs.setdefault("label", "Explanation (Markdown, shown after a qualification answer)")
        kwargs.setdefault("widget", forms.Textarea(attrs={"rows": 3}))
        super().__init__(**kwargs)


class MakeGoldForm(forms.Form):
    purpose = forms.ChoiceField(choices=PURPOSE_CHOICES, widget=forms.RadioSelect, initial="check")
    explanation = ExplanationField()
    is_attention = forms.BooleanField(required=False, label="Attention check (an obvious answer)")
    reason = forms.CharField(
        max_length=2000,
        label="Reason (required, goes into the audit log)",
        widget=forms.Textarea(attrs={"rows": 2}),
    )


class RetireForm(forms.Form):
    reason = forms.CharField(
        max_length=2000,
        label="Reason (required, goes into the audit log)",
        widget=forms.Textarea(attrs={"rows": 2}),
    )


class ExplanationForm(forms.Form):
    explanation = ExplanationField()
    reason = forms.CharField(
        required=False, max_length=2000, label="Reason (optional, goes into the audit log)"
    )
