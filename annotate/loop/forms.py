"""The compare page's judgement and skip forms."""

from django import forms

from annotate.loop import rules, scales

_GRADES = [("", "—"), *((g, g) for g in rules.GRADES)]


class JudgementForm(forms.Form):
    """What the compare page posts, in *displayed* terms (left/right). The one
    place that turns them into canonical terms is `to_vote`."""

    # Not required here: an A/B project's page sends `choice`, a graded
    # one's `strength` (oriented to the left response); the vote rules
    # (validate_vote) say which one is missing, by the project's scale.
    choice = forms.ChoiceField(
        choices=[("left", "Left"), ("right", "Right"), ("tie", "Tie")], required=False
    )
    strength = forms.TypedChoiceField(
        choices=[(s, s) for s in scales.POINTS[scales.GRADED7]],
        coerce=int,
        required=False,
        empty_value=None,
    )
    grade_left = forms.ChoiceField(choices=_GRADES, required=False)
    grade_right = forms.ChoiceField(choices=_GRADES, required=False)
    correct_left = forms.ChoiceField(
        choices=[("", "—"), ("yes", "Correct"), ("no", "Incorrect"), ("unsure", "Unsure")],
        required=False,
    )
    correct_right = forms.ChoiceField(
        choices=[("", "—"), ("yes", "Correct"), ("no", "Incorrect"), ("unsure", "Unsure")],
        required=False,
    )
    confidence = forms.TypedChoiceField(
        choices=[(1, "Low"), (2, "Medium"), (3, "High")],
        coerce=int,
        required=False,
        empty_value=None,
    )
    rationale = forms.CharField(required=False, max_length=5000, widget=forms.Textarea)
    active_seconds = forms.FloatField(required=False, min_value=0, max_value=86400)
    flagged_problem = forms.BooleanField(required=False)
    problem_reason = forms.CharField(required=False, max_length=500)

    def clean(self):
        data = super().clean()
        problem = rules.choice_contradiction(data.get("choice") or "", data.get("strength"))
        if problem:
            self.add_error("choice", problem)
        return data

    def to_vote(self, assignment):
        data = self.cleaned_data
        return rules.vote_from_displayed(
            swapped=assignment.shown_swapped,
            choice=data["choice"],
            correct_left=data.get("correct_left") or "",
            correct_right=data.get("correct_right") or "",
            strength=data.get("strength"),
            grade_left=data.get("grade_left") or "",
            grade_right=data.get("grade_right") or "",
            confidence=data.get("confidence"),
            rationale=data.get("rationale") or "",
            active_seconds=data.get("active_seconds") or 0.0,
            flagged_problem=bool(data.get("flagged_problem")),
            problem_reason=data.get("problem_reason") or "",
        )

    def other_problems(self, assignment) -> dict[str, str]:
        """For a form that failed its own checks (say, no choice): what the
        vote rules would also refuse in the rest of it, so that one Enter
        shows every missing answer instead of one at a time."""
        data = self.cleaned_data
        # Rules that depend on the choice (a tie needs a rationale) are
        # checked with the choice sent, or with "left" when there was none.
        sent = {**data, "choice": data.get("choice") or "left"}
        vote = JudgementForm.to_vote(_Cleaned(sent), assignment)
        item = assignment.item
        try:
            rules.validate_vote(vote, project=item.project, domain=item.domain)
        except rules.JudgementInvalid as exc:
            skip = ("choice", "strength", "active_seconds")
            return {k: v for k, v in exc.errors.items() if k not in skip}
        return {}

    def add_service_errors(self, errors: dict[str, str], assignment) -> None:
        """Map canonical field names in service errors back to what was displayed."""
        for name, message in errors.items():
            field = rules.displayed_field(name, swapped=assignment.shown_swapped)
            self.add_error(field if field in self.fields else None, message)


class _Cleaned:
    """Stands in for a form with these cleaned_data (JudgementForm.to_vote)."""

    def __init__(self, cleaned_data: dict):
        self.cleaned_data = cleaned_data


class SkipForm(forms.Form):
    reason = forms.CharField(max_length=500, error_messages={"required": "Say why you skip."})
