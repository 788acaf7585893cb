"""The form that cuts a release."""

from django import forms

from curation.models import PairwiseMode

ACTIONS = [("drop", "Drop"), ("hold", "Keep aside (held_out/)")]


def action_field(default: str) -> forms.ChoiceField:
    return forms.ChoiceField(
        required=False,
        choices=ACTIONS,
        initial=default,
        widget=forms.RadioSelect,
        label="Its pairs",
        help_text="Dropped, or kept aside in held_out/held_out.jsonl for review (never in "
        "the benchmark's files).",
    )


def judge_runs_field(label: str) -> forms.TypedMultipleChoiceField:
    return forms.TypedMultipleChoiceField(
        required=False,
        coerce=int,
        widget=forms.CheckboxSelectMultiple,
        label=label,
        help_text="Optional: complete judge runs on this project's items join the ensemble, "
        "each read in canonical terms (right = its pick in both orders is the label).",
    )


class ReleaseForm(forms.Form):
    version = forms.CharField(
        max_length=40, help_text="e.g. v1.0 — releases are immutable, so each version once."
    )
    notes = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    domains = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple)
    seed = forms.IntegerField(
        help_text="Seeds which slot (Output1/Output2) holds the chosen response."
    )
    min_label_quality = forms.FloatField(
        required=False,
        min_value=0,
        max_value=1,
        label="Consensus quality ≥",
        help_text="Optional: leave out items the rule agreed on whose label CROWDLAB gives a "
        "probability below this (from the last label-quality analysis; items a curator "
        "decided or reviewed are kept). Recorded in the manifest and the card.",
    )

    rekey = forms.BooleanField(
        required=False,
        label="Re-key IDs",
        help_text="Give every record and pair a label-free ID (the published Multimodal "
        "RewardBench 2 reasoning IDs name the chosen model first). Stable from release to "
        "release; the old-to-new "
        "map is shown to curators on the release page, never put in the files.",
    )

    pairwise = forms.ChoiceField(
        required=False,
        choices=PairwiseMode.choices,
        label="Pairwise decomposition",
        help_text="Ranked and best-of-N items: also write them as TRL preference pairs "
        "(pairwise/<domain>.parquet) for training mixes — the best response against each "
        "other one, or every ordered pair; ties make no pair. Stated in the card and manifest.",
    )

    too_easy_ensemble = forms.TypedMultipleChoiceField(
        required=False,
        coerce=int,
        widget=forms.CheckboxSelectMultiple,
        label="Drop too-easy pairs (ensemble)",
        help_text="Optional: leave out pairs every chosen entry (uploaded predictions or "
        "judge runs on this project's releases) got right in both orders. The ensemble "
        "and the counts dropped per domain are in the manifest and the card.",
    )

    too_easy_judge_runs = judge_runs_field("Too-easy ensemble: project judge runs")
    too_easy_action = action_field("drop")

    low_consensus = forms.FloatField(
        required=False,
        min_value=0,
        max_value=1,
        label="Low-consensus threshold",
        help_text="Optional: pairs whose human consensus (share of current studio votes for "
        "the most-voted choice) is below this, e.g. 0.7. Items without studio votes are kept.",
    )
    low_consensus_action = action_field("drop")

    disagreement_ensemble = forms.TypedMultipleChoiceField(
        required=False,
        coerce=int,
        widget=forms.CheckboxSelectMultiple,
        label="Humans and ensemble disagree (ensemble)",
        help_text="Optional: pairs where the humans' majority and the ensemble's majority "
        "(each entry's pick in each order) differ while both are strong.",
    )
    disagreement_judge_runs = judge_runs_field("Disagreement ensemble: project judge runs")
    disagreement_human = forms.FloatField(
        required=False,
        min_value=0.5,
        max_value=1,
        label="Disagreement: human consensus ≥",
        help_text="Above 0.5; default 0.8.",
    )
    disagreement_share = forms.FloatField(
        required=False,
        min_value=0.5,
        max_value=1,
        label="Disagreement: ensemble share ≥",
        help_text="Above 0.5; default 0.8.",
    )
    disagreement_action = action_field("hold")

    balance_report = forms.BooleanField(
        required=False,
        label="Report side and length balance",
        help_text="Share of pairs with the chosen response first, and longer, per domain "
        "(always reported when a filter or the balancing is used).",
    )
    balance_tolerance = forms.FloatField(
        required=False,
        min_value=0,
        max_value=0.49,
        label="Balance lengths: tolerance",
        help_text="Optional, e.g. 0.05: drop the fewest pairs, sampled with the seed above, so "
        "each domain's share of pairs whose chosen response is longer is within this of 50%.",
    )

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        from curation.models import Evaluation, JudgeRun, JudgeRunStatus

        entries = [
            (e.pk, f"{e.name} (release {e.release.version})")
            for e in Evaluation.objects.filter(release__project=project)
            .select_related("release")
            .order_by("pk")
        ]
        self.fields["too_easy_ensemble"].choices = entries
        self.fields["disagreement_ensemble"].choices = entries
        runs = [
            (r.pk, f"{r.name} (model {r.model}, project judge run #{r.pk})")
            for r in JudgeRun.objects.filter(project=project, status=JudgeRunStatus.COMPLETE)
            .only("pk", "name", "model")
            .order_by("pk")
        ]
        self.fields["too_easy_judge_runs"].choices = runs
        self.fields["disagreement_judge_runs"].choices = runs
        self.fields["domains"].choices = [
            (d.slug, d.title) for d in project.domains.order_by("position")
        ]

    def clean_version(self):
        version = self.cleaned_data["version"].strip()
        if not version or any(c in version for c in "/\\ ") or version.startswith("."):
            raise forms.ValidationError("Use letters, digits, dots, dashes or underscores.")
        return version
