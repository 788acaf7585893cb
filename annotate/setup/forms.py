"""Forms of the setup pages. They check shapes; the rules (unique slugs,
release locks, last admin…) are the service's, shown beside their field."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import UserCreationForm
from django.core.validators import MaxValueValidator, MinValueValidator
from django.urls import reverse

from ..models import DomainKind, Project, Role
from .presets import PRESET_CHOICES
from .service import PROJECT_FIELDS
from .team import INVITATION_DAYS_MAX

MARKDOWN_HELP = "Markdown (sanitised like responses); the preview below updates as you type."


def live_preview(form: forms.Form) -> None:
    """htmx attributes on each Markdown box: as the admin types, the closest
    form (with its CSRF token) is posted to the preview view, which answers
    with the sanitised HTML for the box named in `field`."""
    for name, field in form.fields.items():
        target = field.widget.attrs.get("data-preview")
        if target:
            field.widget.attrs.update(
                {
                    "hx-post": f"{reverse('markdown_preview')}?field={name}",
                    "hx-trigger": "input changed delay:300ms",
                    "hx-target": f"#{target}",
                    "hx-swap": "innerHTML",
                    "aria-describedby": target,
                }
            )


# Ongoing checks (issue 36, annotate.checks).
CHECK_FIELDS = ("check_rate", "check_threshold", "check_minimum")


class ProjectSettingsForm(forms.ModelForm):
    class Meta:
        model = Project
        fields = list(PROJECT_FIELDS)
        widgets = {
            "description": forms.Textarea(attrs={"rows": 2}),
            "guidelines": forms.Textarea(attrs={"rows": 10, "data-preview": "guidelines-preview"}),
        }
        help_texts = {
            "guidelines": MARKDOWN_HELP,
            "lease_minutes": "How long an annotator holds an item before it returns to the pool.",
            "preference_scale": "A/B asks which response is better; a graded scale also how "
            "much (keys 1 to 6 or 1 to 7 on the compare page). Fixed once the project has votes.",
            "allow_tie": "A/B projects (a graded scale has a tie only with 7 points).",
            "check_rate": "Share of each annotator's items that are check items (gold and "
            "attention checks), from 0 to 1; 0 turns checks and pauses off.",
            "qualification_required": "Newcomers answer the qualification items first (import "
            'them with "purpose": "qualification" and an "explanation"; see the import page).',
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        live_preview(self)
        # Left out (a client that predates scales): the scale stays as it is.
        self.fields["preference_scale"].required = False
        # Left out (a form that predates qualification, issue 36): as they are.
        for name in ("qualification_pass_mark", "qualification_retry_hours"):
            self.fields[name].required = False
        for name in CHECK_FIELDS:
            # Left out (a client that predates checks): the value stays as it is.
            self.fields[name].required = False
        for name in ("check_rate", "check_threshold"):
            self.fields[name].validators += [MinValueValidator(0), MaxValueValidator(1)]
            self.fields[name].widget.attrs.update(min=0, max=1, step=0.01)

    def _kept(self, name):
        value = self.cleaned_data.get(name)
        return getattr(self.instance, name) if value is None else value

    def clean_check_rate(self):
        return self._kept("check_rate")

    def clean_check_threshold(self):
        return self._kept("check_threshold")

    def clean_check_minimum(self):
        return self._kept("check_minimum")

    def clean_preference_scale(self):
        return self.cleaned_data.get("preference_scale") or self.instance.preference_scale

    def clean_qualification_pass_mark(self):
        value = self.cleaned_data.get("qualification_pass_mark")
        return self.instance.qualification_pass_mark if value is None else value

    def clean_qualification_retry_hours(self):
        value = self.cleaned_data.get("qualification_retry_hours")
        return self.instance.qualification_retry_hours if value is None else value


class ProjectCreateForm(ProjectSettingsForm):
    preset = forms.ChoiceField(
        choices=PRESET_CHOICES,
        initial="mrb",
        label="Domains",
        help_text="Editable afterwards: add, rename, retitle, re-word.",
    )

    class Meta(ProjectSettingsForm.Meta):
        fields = [
            "name",
            "slug",
            "description",
            "guidelines",
            "votes_per_item",
            "escalation_votes",
            "agree_share",
        ] + [
            f
            for f in ProjectSettingsForm.Meta.fields
            if f not in ("name", "description", "guidelines")
        ]
        help_texts = {
            **ProjectSettingsForm.Meta.help_texts,
            "slug": "In the project's URLs and release names: letters, digits, - and _.",
            "votes_per_item": "Independent votes each item collects before its verdict.",
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        votes = self.fields["votes_per_item"]
        votes.validators += [MinValueValidator(1), MaxValueValidator(50)]
        votes.widget.attrs.update(min=1, max=50)

    def validate_unique(self):
        """The service checks the slug (with its own message)."""


class DomainForm(forms.Form):
    slug = forms.SlugField(max_length=80, help_text="Locked once a release uses the domain.")
    title = forms.CharField(max_length=200)
    export_category = forms.CharField(
        max_length=200,
        label="Export Category",
        help_text="Written verbatim to each record's Category; locked once a release uses it.",
    )
    kind = forms.ChoiceField(
        choices=DomainKind.choices,
        help_text="Correctness domains also ask whether each response is correct.",
    )
    correctness_question = forms.CharField(
        max_length=200,
        required=False,
        label="Correctness wording",
        help_text='The question asked of each response; "{response}" becomes A or B, e.g. '
        '"Is {response} safe?" (empty: "Is {response} correct?").',
    )
    yes_label = forms.CharField(
        max_length=40, required=False, label="Yes answer", help_text='Empty: "Correct".'
    )
    no_label = forms.CharField(
        max_length=40, required=False, label="No answer", help_text='Empty: "Incorrect".'
    )
    asks_grade = forms.BooleanField(
        required=False,
        label="Ask a letter grade of each response",
        help_text="A, B or C per response (Multimodal RewardBench 2's reasoning grades), in "
        "any kind of domain.",
    )
    grade_question = forms.CharField(
        max_length=200,
        required=False,
        label="Grade wording",
        help_text='"{response}" becomes A or B (empty: "Grade of response {response}").',
    )
    guidelines = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 6, "data-preview": "domain-guidelines-preview"}),
        help_text=MARKDOWN_HELP,
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        live_preview(self)


class AddMemberForm(forms.Form):
    username = forms.CharField(max_length=150, help_text="An existing account's username.")
    role = forms.ChoiceField(choices=Role.choices, initial=Role.ANNOTATOR)

    def clean_username(self):
        name = self.cleaned_data["username"].strip()
        user = get_user_model().objects.filter(username__iexact=name).first()
        if user is None:
            raise forms.ValidationError(
                f"No account {name!r}; invite them with a link below instead."
            )
        self.cleaned_data["user"] = user
        return name


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices)


class InvitationForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices, initial=Role.ANNOTATOR)
    uses = forms.ChoiceField(
        choices=[("one", "One person (one-time link)"), ("many", "Anyone with the link")],
        initial="one",
        widget=forms.RadioSelect,
        label="Who may use it",
    )
    max_uses = forms.IntegerField(
        min_value=1,
        max_value=10_000,
        required=False,
        label="At most (people)",
        help_text="For a shared link: empty for no limit until it expires.",
    )
    expires_in_days = forms.IntegerField(
        min_value=1, max_value=INVITATION_DAYS_MAX, initial=7, label="Expires after (days)"
    )
    note = forms.CharField(max_length=200, required=False, help_text="Who it is for (for you).")

    def limit(self) -> int | None:
        if self.cleaned_data["uses"] == "one":
            return 1
        return self.cleaned_data.get("max_uses")


class SignUpForm(UserCreationForm):
    email = forms.EmailField(required=False, help_text="For password resets (optional).")

    class Meta(UserCreationForm.Meta):
        model = get_user_model()
        fields = ("username", "email")


class BulkUsersForm(forms.Form):
    file = forms.FileField(
        label="CSV file",
        help_text="Header username,email,role; role is annotator, curator or admin (of the "
        "project below), creator (may create projects) or empty.",
    )
    project = forms.ModelChoiceField(
        queryset=Project.objects.filter(archived_at__isnull=True).order_by("name"),
        required=False,
        help_text="The project the annotator/curator/admin roles apply to.",
    )


class ImportRootsForm(forms.Form):
    """Site admins: which of the site's IMPORT_ROOTS the project may read."""

    import_roots = forms.MultipleChoiceField(
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Import roots this project may read",
        help_text="Server folders (IMPORT_ROOTS) its admins may import from by path. "
        "Give a team only its own folders.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["import_roots"].choices = [(root, root) for root in settings.IMPORT_ROOTS]
