from django import forms

from .importing import FORMATS


class ImportForm(forms.Form):
    dataset = forms.FileField(
        help_text="Multimodal RewardBench .json, chosen/rejected .jsonl, or a .zip holding "
        "one of them together with its images."
    )
    images = forms.FileField(
        required=False, help_text="A .zip of the images, if they are not inside the dataset zip."
    )
    format = forms.ChoiceField(choices=[("", "Detect")] + [(f, f) for f in FORMATS], required=False)
    domain = forms.ChoiceField(
        required=False, help_text="For chosen/rejected files without a category field."
    )
    field_map = forms.CharField(
        required=False,
        help_text="Optional, one per line: ours=theirs (e.g. prompt=query).",
        widget=forms.Textarea(attrs={"rows": 3}),
    )
    gold_from_label = forms.BooleanField(
        required=False, help_text="Treat the file's chosen response as gold."
    )
    update = forms.BooleanField(
        required=False, help_text="Replace items whose content changed (only unvoted items)."
    )

    def __init__(self, *args, domains=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["domain"].choices = [("", "From the file")] + [
            (d.slug, d.title) for d in domains
        ]

    def clean_dataset(self):
        f = self.cleaned_data["dataset"]
        if not f.name.lower().endswith((".json", ".jsonl", ".zip")):
            raise forms.ValidationError("Upload a .json, .jsonl or .zip file.")
        return f

    def clean_images(self):
        f = self.cleaned_data.get("images")
        if f and not f.name.lower().endswith(".zip"):
            raise forms.ValidationError("Images must be uploaded as a .zip file.")
        return f

    def clean(self):
        data = super().clean()
        dataset, images = data.get("dataset"), data.get("images")
        if dataset and images and dataset.name.lower().endswith(".zip"):
            self.add_error(
                "images",
                "The dataset zip already holds its images; upload the images zip only "
                "with a .json or .jsonl dataset.",
            )
        return data

    def clean_field_map(self):
        mapping = {}
        for n, line in enumerate(self.cleaned_data["field_map"].splitlines(), start=1):
            if not line.strip():
                continue
            ours, sep, theirs = line.partition("=")
            if not sep or not ours.strip() or not theirs.strip():
                raise forms.ValidationError(f"Line {n} is not ours=theirs: {line!r}")
            mapping[ours.strip()] = theirs.strip()
        return mapping


class SharedFields(dict):
    """A form's base_fields, handed to each instance as a new dict of the
    same Field objects instead of deep copies of them (Django deep-copies
    every field, widget and validator list per form: about 0.3 ms for the
    judgement form, posted on every judgement). Only for a form whose
    instances never change their fields (choices, widgets, attrs): one that
    did would change them for every later form."""

    def __deepcopy__(self, memo):
        return dict(self)


class JudgementForm(forms.Form):
    """What the compare page posts, in *displayed* terms (left/right). The one
    place that turns them into canonical terms is `to_vote`."""

    choice = forms.ChoiceField(
        choices=[("left", "Left"), ("right", "Right"), ("tie", "Tie")],
        error_messages={"required": "Choose the better response."},
    )
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

    def to_vote(self, assignment):
        from .services import Vote

        data = self.cleaned_data
        choice = data["choice"]
        canonical = "tie" if choice == "tie" else assignment.displayed_to_canonical(choice)
        correct = {
            assignment.displayed_to_canonical("left"): data.get("correct_left") or "",
            assignment.displayed_to_canonical("right"): data.get("correct_right") or "",
        }
        return Vote(
            choice=canonical,
            correct_1=correct["1"],
            correct_2=correct["2"],
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
        from .services import JudgementInvalid, validate_vote

        data = self.cleaned_data
        # Rules that depend on the choice (a tie needs a rationale) are
        # checked with the choice sent, or with "left" when there was none.
        sent = {**data, "choice": data.get("choice") or "left"}
        vote = JudgementForm.to_vote(_Cleaned(sent), assignment)
        item = assignment.item
        try:
            validate_vote(vote, project=item.project, domain=item.domain)
        except JudgementInvalid as exc:
            return {k: v for k, v in exc.errors.items() if k not in ("choice", "active_seconds")}
        return {}

    def add_service_errors(self, errors: dict[str, str], assignment) -> None:
        """Map canonical field names in service errors back to what was displayed."""
        names = {
            "correct_" + assignment.displayed_to_canonical("left"): "correct_left",
            "correct_" + assignment.displayed_to_canonical("right"): "correct_right",
        }
        for name, message in errors.items():
            field = names.get(name, name)
            self.add_error(field if field in self.fields else None, message)


class _Cleaned:
    """Stands in for a form with these cleaned_data (JudgementForm.to_vote)."""

    def __init__(self, cleaned_data: dict):
        self.cleaned_data = cleaned_data


# No instance changes its fields: views only read them and add errors, which
# live on the form.
JudgementForm.base_fields = SharedFields(JudgementForm.base_fields)


class SkipForm(forms.Form):
    reason = forms.CharField(max_length=500, error_messages={"required": "Say why you skip."})
