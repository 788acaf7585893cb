"""The release form's optional filter "consensus quality >= x".

An item is left out when the rule agreed on it (provenance unanimous or
majority, whether or not a curator bulk-accepted it) and the last label-quality
analysis gave its current label a CROWDLAB probability below x. Items a curator
decided (adjudicated), confirmed in the review (reviewed) or that carry a gold
label are kept: a human looked at them. Items the analysis did not score (no
votes, or all ties) are kept too. The threshold, the analysis' time and its
model ensemble are recorded in the manifest and the card."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q

from curation.models import ItemQuality, LabelQualityRun, LabelQualityStatus, Provenance
from curation.releases.service import ReleaseError

FILTERED_PROVENANCE = (Provenance.UNANIMOUS, Provenance.MAJORITY)


def check_filter(*, project, threshold: float) -> None:
    if not 0 <= threshold <= 1:
        raise ReleaseError("The consensus-quality threshold must be between 0 and 1.")
    ready = LabelQualityRun.objects.filter(project=project, status=LabelQualityStatus.READY)
    if not ready.exists():
        raise ReleaseError(
            "Compute label quality first (Suspected label errors page): the "
            "consensus-quality filter needs its results."
        )


def below_threshold(threshold: float) -> Q:
    """Verdicts to leave out (a Q over Verdict)."""
    low = ItemQuality.objects.filter(
        item_id=OuterRef("item_id"),
        label=OuterRef("final_choice"),
        label_quality__lt=threshold,
    )
    return Q(Exists(low), provenance__in=FILTERED_PROVENANCE)


def filter_summary(release) -> dict:
    from curation.models import RELEASABLE, Verdict

    run = LabelQualityRun.objects.filter(project=release.project).first()
    excluded = (
        Verdict.objects.filter(
            RELEASABLE, project=release.project, item__domain__slug__in=release.domains
        )
        .filter(below_threshold(release.min_label_quality))
        .count()
    )
    return {
        "min": release.min_label_quality,
        "measure": "CROWDLAB probability of the released label (cleanlab, quality_method=crowdlab)",
        "excluded": excluded,
        "computed_at": run.computed_at.isoformat() if run and run.computed_at else None,
        "entries": (run.payload.get("entries") if run else None) or [],
    }
