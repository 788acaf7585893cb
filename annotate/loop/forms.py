"""The compare page's judgement and skip forms."""

import dataclasses

from django import forms

from annotate.loop import rules, scales

_GRADES = [("", "—"), *((g, g) for g in rules.GRADES)]
_LABEL_CHOICES = [("", "—"), ("yes", "Correct"), ("no", "Incorrect"), ("unsure", "Unsure")]


class _VoteForm(forms.Form):
    """What every vote form asks besides the answer."""

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

    def extras(self) -> dict:
        data = self.cleaned_data
        return {
            "confidence": data.get("confidence"),
            "rationale": data.get("rationale") or "",
            "active_seconds": data.get("active_seconds") or 0.0,
            "flagged_problem": bool(data.get("flagged_problem")),
            "problem_reason": data.get("problem_reason") or "",
        }

    def add_service_errors(self, errors: dict[str, str]) -> None:
        """Show the service's refusals (by displayed field name) beside their field."""
        for name, message in errors.items():
            self.add_error(name if name in self.fields else None, message)


class JudgementForm(_VoteForm):
    """What the compare page posts, in *displayed* terms (left/right), handed
    to the services as they are (`to_vote`): the services map them to
    canonical terms after locking the assignment."""

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
    correct_left = forms.ChoiceField(choices=_LABEL_CHOICES, required=False)
    correct_right = forms.ChoiceField(choices=_LABEL_CHOICES, required=False)
    # The answer's fields first, as before the extras moved to _VoteForm.
    field_order = [
        "choice",
        "strength",
        "grade_left",
        "grade_right",
        "correct_left",
        "correct_right",
    ]

    def clean(self):
        data = super().clean()
        problem = rules.choice_contradiction(data.get("choice") or "", data.get("strength"))
        if problem:
            self.add_error("choice", problem)
        return data

    def to_vote(self) -> rules.DisplayedVote:
        """The answer as displayed; the service maps it to canonical terms."""
        data = self.cleaned_data
        return rules.DisplayedVote(
            choice=data.get("choice") or "",
            correct_left=data.get("correct_left") or "",
            correct_right=data.get("correct_right") or "",
            strength=data.get("strength"),
            grade_left=data.get("grade_left") or "",
            grade_right=data.get("grade_right") or "",
            **self.extras(),
        )

    def other_problems(self, assignment) -> dict[str, str]:
        """For a form that failed its own checks (say, no choice): what the
        vote rules would also refuse in the rest of it (by displayed field
        name), so that one Enter shows every missing answer instead of one at
        a time. `assignment` comes with its item, project and domain."""
        # Rules that depend on the choice (a tie needs a rationale) are
        # checked with the choice sent, or with "left" when there was none.
        shown = self.to_vote()
        shown = dataclasses.replace(shown, choice=shown.choice or "left")
        vote = rules.canonical_vote(shown, order=assignment.display_order)
        item = assignment.item
        try:
            rules.validate_vote(vote, project=item.project, domain=item.domain)
        except rules.JudgementInvalid as exc:
            errors = rules.displayed_errors(exc.errors, order=assignment.display_order)
            skip = ("choice", "strength", "active_seconds")
            return {k: v for k, v in errors.items() if k not in skip}
        return {}


class SkipForm(forms.Form):
    reason = forms.CharField(max_length=500, error_messages={"required": "Say why you skip."})


class SlotVoteForm(_VoteForm):
    """A best-of-N pick or a ranking as the compare page posts it, by
    displayed position 1..N (`n`): `pick` (a position or "none"), one
    `rank_<position>` per response (ties share a number; the page's keys
    and drag and drop write them, and they are plain selects without
    JavaScript), `correct_<position>` / `grade_<position>` where the domain
    asks; handed to the services as displayed (`to_vote`)."""

    def __init__(self, *args, task: str, n: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.task, self.n = task, n
        self.rank_problem = ""  # the ranking's own refusal, shown under it
        positions = range(1, n + 1)
        if task == rules.BEST_OF_N:
            self.fields["pick"] = forms.ChoiceField(
                choices=[(str(p), str(p)) for p in positions] + [(rules.NONE_PICKED, "None")],
                required=False,
            )
        else:
            for p in positions:
                self.fields[f"rank_{p}"] = forms.TypedChoiceField(
                    choices=[("", "—")] + [(r, r) for r in positions],
                    coerce=int,
                    required=False,
                    empty_value=None,
                )
        for p in positions:
            self.fields[f"correct_{p}"] = forms.ChoiceField(choices=_LABEL_CHOICES, required=False)
            self.fields[f"grade_{p}"] = forms.ChoiceField(choices=_GRADES, required=False)

    def clean(self):
        data = super().clean()
        if self.task == rules.RANKING:
            missing = [
                rules.POSITION_NAMES[p - 1]
                for p in range(1, self.n + 1)
                if data.get(f"rank_{p}") is None
            ]
            if missing:
                self.rank_problem = (
                    f"Place every response: {', '.join(missing)} "
                    f"{'has' if len(missing) == 1 else 'have'} no place yet."
                )
                self.add_error(None, self.rank_problem)
        return data

    def displayed_ranks(self) -> tuple[int, ...]:
        """The ranks by position as a competition ranking (the selects'
        numbers keep their order: "1, 1, 2" is sent as "1, 1, 3")."""
        given = tuple(self.cleaned_data.get(f"rank_{p}") or 0 for p in range(1, self.n + 1))
        return rules.competition_ranks(given) if all(given) else given

    def to_vote(self) -> rules.DisplayedVote:
        data = self.cleaned_data
        positions = range(1, self.n + 1)
        correct = tuple(data.get(f"correct_{p}") or "" for p in positions)
        grades = tuple(data.get(f"grade_{p}") or "" for p in positions)
        return rules.DisplayedVote(
            task=self.task,
            pick=(data.get("pick") or "") if self.task == rules.BEST_OF_N else "",
            ranks=self.displayed_ranks() if self.task == rules.RANKING else (),
            slot_correct=correct if any(correct) else (),
            slot_grades=grades if any(grades) else (),
            **self.extras(),
        )
