"""Sections of a release manifest drawn from the database beside the
records (curation.releases.build passes them to the exporter): agreement per
domain as the dashboard shows it, the release's real creation time, the
bootstrap behind the intervals, and the rule each verdict was decided under.
"""

from __future__ import annotations

from curation.agreement import reports, stats
from curation.releases.decision_rules import decision_rules


def agreement(project, domains) -> dict:
    """Alpha and its bootstrap CI per included domain: the agreement
    dashboard's own figures (reports.domain_summaries, reports.alpha_intervals,
    drawn with the project's one bootstrap seed, not the release's), as text
    for the card and as numbers (alpha_value, ci95) for machines."""
    summaries = reports.domain_summaries(project)
    # Only what the card shows: choice, per domain.
    intervals = reports.alpha_intervals(project, kinds=("choice",), overall=False)
    out = {}
    for d in domains:
        if d.pk not in summaries:
            out[d.slug] = {"alpha": "undefined", "ci": "undefined"}
            continue
        alpha = summaries[d.pk].choice.alpha
        ci = intervals[d.slug]["choice"]
        interval = isinstance(ci, stats.Interval)
        out[d.slug] = {
            "alpha": f"{alpha:.3f}" if isinstance(alpha, float) else str(alpha),
            "ci": f"[{ci.low:.3f}, {ci.high:.3f}]" if interval else str(ci),
            "alpha_value": alpha if isinstance(alpha, float) else None,
            "ci95": {"low": ci.low, "high": ci.high} if interval else None,
        }
    return out


def extra(release, verdicts, snapshot_at: str) -> dict:
    """created_at: when the release was created (cut by its curator), a real
    time that stays the same when the same release is built again (so a
    rebuild is still byte-identical); snapshot_at: the newest decision it
    holds. The bootstrap behind the agreement intervals (the dashboard's
    seed), and the rule each verdict was decided under."""
    return {
        "created_at": release.created_at.isoformat(),
        "snapshot_at": snapshot_at,
        "agreement_bootstrap": {
            "seed": reports.bootstrap_seed(release.project),
            "n_resamples": reports.BOOTSTRAP_RESAMPLES,
            "level": 0.95,
            "method": "item bootstrap of Krippendorff's alpha (nominal), percentile interval",
        },
        "decision_rules": decision_rules(release.project, verdicts),
    }
