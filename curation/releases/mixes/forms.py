"""The form that records a training mix: name, version, filters, limits and
one row per source the curator may mix (every ready release and every whole
project they curate)."""

from __future__ import annotations

from django import forms

from curation.models import Mix, Provenance, VerdictStatus
from curation.releases.mixes.service import SourceChoice, curated_projects, mixable_releases

PROVENANCE_CHOICES = [(p.value, p.label) for p in Provenance if p.value]


class MixForm(forms.Form):
    name = forms.SlugField(max_length=80, help_text="Names the mix's folder, e.g. basereward-mix.")
    version = forms.CharField(max_length=40, initial="v1", help_text="Each version once.")
    notes = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    statuses = forms.MultipleChoiceField(
        label="Verdict status",
        choices=[(VerdictStatus.AGREED, "Agreed"), (VerdictStatus.RESOLVED, "Resolved")],
        initial=[VerdictStatus.AGREED, VerdictStatus.RESOLVED],
        widget=forms.CheckboxSelectMultiple,
    )
    provenances = forms.MultipleChoiceField(
        label="Provenance",
        choices=PROVENANCE_CHOICES,
        initial=[value for value, _ in PROVENANCE_CHOICES],
        widget=forms.CheckboxSelectMultiple,
    )
    min_share = forms.FloatField(
        required=False,
        min_value=0,
        max_value=1,
        label="Minimum agreement share",
        help_text="Votes for the chosen response over all votes, 0 to 1 (blank: no minimum).",
    )
    domains = forms.CharField(
        required=False, help_text="Domain slugs separated by commas (blank: every domain)."
    )
    mode = forms.ChoiceField(
        choices=Mix.Mode.choices, initial=Mix.Mode.CAPS, widget=forms.RadioSelect, label="Limits"
    )
    size = forms.IntegerField(
        required=False,
        min_value=1,
        label="Total records (weights)",
        help_text="Blank: the largest mix the weights allow.",
    )
    dedup = forms.BooleanField(
        required=False,
        initial=True,
        label="Drop duplicates across sources",
        help_text="Same image (SHA-256) and same prompt after normalisation.",
    )
    seed = forms.IntegerField(initial=0, min_value=-(2**31), max_value=2**31 - 1)

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.sources = []  # (key, label, project slug, release version or None)
        for r in mixable_releases(user):
            self.sources.append(
                (f"r{r.pk}", f"{r.project.name} — release {r.version}", r.project.slug, r.version)
            )
        for p in curated_projects(user).order_by("slug"):
            self.sources.append(
                (f"p{p.pk}", f"{p.name} — whole project (decided items now)", p.slug, None)
            )
        for n, (key, label, _, _) in enumerate(self.sources):
            self.fields[f"{key}-on"] = forms.BooleanField(required=False, label=label)
            self.fields[f"{key}-order"] = forms.IntegerField(
                required=False, initial=n + 1, min_value=1, label=f"Order of {label}"
            )
            self.fields[f"{key}-cap"] = forms.IntegerField(
                required=False, min_value=1, label=f"Cap of {label}"
            )
            self.fields[f"{key}-weight"] = forms.FloatField(
                required=False, min_value=0.001, label=f"Weight of {label}"
            )

    def source_rows(self):
        """(label, on, order, cap, weight) bound fields for the template's table."""
        return [
            (
                label,
                self[f"{key}-on"],
                self[f"{key}-order"],
                self[f"{key}-cap"],
                self[f"{key}-weight"],
            )
            for key, label, _, _ in self.sources
        ]

    def clean(self):
        data = super().clean()
        chosen = []
        for n, (key, _, project, release) in enumerate(self.sources):
            if data.get(f"{key}-on"):
                order = data.get(f"{key}-order") or n + 1
                chosen.append(
                    (
                        order,
                        n,
                        SourceChoice(
                            project=project,
                            release=release,
                            cap=data.get(f"{key}-cap"),
                            weight=data.get(f"{key}-weight"),
                        ),
                    )
                )
        if not chosen:
            raise forms.ValidationError("Choose at least one source.")
        data["sources"] = [s for _, _, s in sorted(chosen, key=lambda t: (t[0], t[1]))]
        data["domain_list"] = [
            d.strip() for d in (data.get("domains") or "").split(",") if d.strip()
        ]
        return data

    def service_arguments(self) -> dict:
        d = self.cleaned_data
        return {
            "name": d["name"],
            "version": d["version"],
            "notes": d["notes"],
            "sources": d["sources"],
            "statuses": d["statuses"],
            "provenances": d["provenances"],
            "min_share": d["min_share"],
            "domains": d["domain_list"],
            "mode": d["mode"],
            "size": d["size"],
            "dedup": d["dedup"],
            "seed": d["seed"],
        }
