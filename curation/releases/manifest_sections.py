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


def extra(release, verdicts, snapshot_at: str, *, released: dict[str, str] | None = None) -> dict:
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
        "decision_rules": _released_ids(decision_rules(release.project, verdicts), released),
    }


def _released_ids(rules: dict, released: dict[str, str] | None) -> dict:
    """decision_rules with the release's re-keyed IDs (sorted), if any."""
    if released is None:
        return rules
    for version in rules["versions"]:
        for key in ("decided_by_rule", "decided_by_curator"):
            version[key] = sorted(released[ext_id] for ext_id in version[key])
    return rules


def members(*, domains, ids_by_domain, mmrb2_pairs, scale: str, rekeyed: bool) -> dict:
    """Manifest counts of every member, not just MRB records (`counts`):
    `members` per domain (MRB records plus pairs only in an MMRB2 task file:
    image or interleaved responses) and `members_total`; `mmrb2` per task
    (its file, pairs written, how many of them are only there, and the
    scale of the human_annotations written from votes); `id_rekey` when the
    release re-keyed its IDs (the salt stays secret; curators see the map)."""
    only: dict[str, int] = {}
    tasks: dict[str, dict] = {}
    for pair in mmrb2_pairs:
        entry = tasks.setdefault(
            pair.task,
            {"file": f"mmrb2/{pair.task}.json", "domain": pair.domain, "pairs": 0, "mmrb2_only": 0},
        )
        entry["pairs"] += 1
        if not pair.mrb_shaped:
            entry["mmrb2_only"] += 1
            only[pair.domain] = only.get(pair.domain, 0) + 1
    per_domain = {d.slug: len(ids_by_domain[d.slug]) + only.get(d.slug, 0) for d in domains}
    out: dict = {"members": per_domain, "members_total": sum(per_domain.values())}
    if tasks:
        out["mmrb2"] = {
            "tasks": tasks,
            "human_annotations_scale": scale,
            "human_annotations_rule": (
                "written from each annotator's latest vote, in the order they first "
                "submitted, where the studio collected graded votes (reasoning: letter "
                "grades); else as imported. chosen follows the verdict."
            ),
        }
    if rekeyed:
        out["id_rekey"] = {
            "method": "<prefix>_<first 16 hex digits of sha256(salt:prefix:old id)>",
            "prefix": "MRB records: math/pairs where the official sub-bucket needs it, "
            "else the category's name; MMRB2 pairs: the task",
            "salt": "secret (kept by the studio; the same for every re-keyed release of "
            "the project, so an item keeps its ID)",
            "mapping": "curators and admins of the project only (release page, API)",
        }
    return out
