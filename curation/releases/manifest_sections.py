"""Sections of a release manifest drawn from the database beside the
records (curation.releases.build passes them to the exporter): agreement per
domain as the dashboard shows it, the release's real creation time, the
bootstrap behind the intervals, and the rule each verdict was decided under.
"""

from __future__ import annotations

from django.db.models import Count, Q

from annotate.models import ItemPurpose, Judgement
from curation.agreement import graded, reports, stats
from curation.agreement.graded_report import graded_intervals, strengths_by_domain
from curation.models import Provenance, Verdict, VerdictStatus
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
        out[d.slug] = _alpha_entry(summaries[d.pk].choice.alpha, intervals[d.slug]["choice"])
    if project.is_graded:
        _add_graded(project, domains, out)
    return out


def _alpha_entry(alpha, ci) -> dict:
    """An alpha and its interval, as text for the card and numbers for machines."""
    interval = isinstance(ci, stats.Interval)
    return {
        "alpha": f"{alpha:.3f}" if isinstance(alpha, float) else str(alpha),
        "ci": f"[{ci.low:.3f}, {ci.high:.3f}]" if interval else str(ci),
        "alpha_value": alpha if isinstance(alpha, float) else None,
        "ci95": {"low": ci.low, "high": ci.high} if interval else None,
    }


def _add_graded(project, domains, out: dict) -> None:
    """Graded projects: each domain's `graded` entry, Krippendorff's alpha of
    the votes on the scale at the ordinal and interval levels with their
    item-bootstrap intervals (the dashboard's, with the same seed); the
    binary collapse is the domain's nominal alpha beside it."""
    scale = project.preference_scale
    strengths = strengths_by_domain(project)
    cis = graded_intervals(
        project, seed=reports.bootstrap_seed(project), n_resamples=reports.BOOTSTRAP_RESAMPLES
    )
    for d in domains:
        if d.slug not in out:
            continue
        r = graded.graded_reliability(strengths.get(d.slug, []), scale)
        out[d.slug]["graded"] = {
            "scale": scale,
            "n_values": r.n_values,
            "n_pairable": r.n_pairable,
            **{
                # No interval where there are no graded votes: the point's reason.
                level: _alpha_entry(
                    getattr(r, level), cis.get(d.slug, {}).get(level, getattr(r, level))
                )
                for level in graded.LEVELS
            },
        }


def annotation(project, domain_slugs) -> dict:
    """What happened to the items of the release's domains, for the card:
    votes and annotators, decisions by who made them (the rule, a curator,
    the label-quality review, gold imported from a release), exclusions,
    escalations that really happened, and the consensus rule if set."""
    in_domains = Verdict.objects.filter(project=project, item__domain__slug__in=domain_slugs)
    # One pass over the verdicts and one over the votes, not a count each.
    decided = Q(status__in=(VerdictStatus.AGREED, VerdictStatus.RESOLVED))
    tally = in_domains.aggregate(
        decided=Count("pk", filter=decided),
        excluded=Count("pk", filter=Q(status=VerdictStatus.EXCLUDED)),
        escalated=Count("pk", filter=Q(escalations__gt=0)),
        **{
            name: Count("pk", filter=decided & Q(provenance=name))
            for name in Provenance.values
            if name
        },
    )
    votes = Judgement.objects.filter(
        assignment__item__project=project,
        assignment__item__purpose=ItemPurpose.BENCHMARK,
        assignment__item__domain__slug__in=domain_slugs,
        is_current=True,
    ).aggregate(n=Count("pk"), annotators=Count("assignment__annotator", distinct=True))
    gold_sources = []
    if tally[Provenance.GOLD]:
        gold_sources = sorted(
            in_domains.filter(provenance=Provenance.GOLD)
            .order_by()
            .values_list("reason", flat=True)
            .distinct()[:5]
        )
    total = tally["decided"] + tally["excluded"]
    by_curator = tally[Provenance.ADJUDICATED]
    return {
        "votes_per_item": project.votes_per_item,
        "agree_share": project.agree_share,
        "escalation_votes": project.escalation_votes,
        "escalated": tally["escalated"],
        "consensus_strength": project.consensus_strength if project.is_graded else None,
        "n_votes": votes["n"],
        "n_annotators": votes["annotators"],
        "agreed": tally[Provenance.UNANIMOUS] + tally[Provenance.MAJORITY],
        "adjudicated": by_curator,
        "adjudicated_share": by_curator / tally["decided"] if tally["decided"] else None,
        "reviewed": tally[Provenance.REVIEWED],
        "gold": tally[Provenance.GOLD],
        "gold_sources": gold_sources,
        "excluded": tally["excluded"],
        "excluded_share": tally["excluded"] / total if total else None,
    }


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
            "method": "item bootstrap of Krippendorff's alpha (nominal"
            + ("; graded votes also ordinal and interval" if release.project.is_graded else "")
            + "), percentile interval",
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


def members(*, domains, ids_by_domain, parts, rekey_prefixes, rekeyed: bool) -> dict:
    """Manifest counts of every member, not just the records (`counts`):
    `members` per domain (records plus members only in a benchmark's own
    files, e.g. pairs with image responses) and `members_total`; when a
    benchmark wrote files of its own, `formats` (the formats the release
    holds; `format` names the studio's release layout, which release imports
    read) and each such benchmark's section under its key; `id_rekey` when
    the release re-keyed its IDs (the salt stays secret; curators see the
    map), with each benchmark's prefix rule."""
    only: dict[str, int] = {}
    for part in parts:
        for slug, n in part.members_by_domain.items():
            only[slug] = only.get(slug, 0) + n
    per_domain = {d.slug: len(ids_by_domain[d.slug]) + only.get(d.slug, 0) for d in domains}
    out: dict = {"members": per_domain, "members_total": sum(per_domain.values())}
    if any(part.manifest for part in parts):
        out["formats"] = [part.format_name for part in parts if part.holds]
        out.update({part.key: part.manifest for part in parts if part.manifest})
    if rekeyed:
        out["id_rekey"] = {
            "method": "<prefix>_<first 16 hex digits of sha256(salt:prefix:old id)>",
            "prefix": "; ".join(prefix for prefix in rekey_prefixes if prefix),
            "salt": "secret (kept by the studio; the same for every re-keyed release of "
            "the project, so an item keeps its ID)",
            "mapping": "curators and admins of the project only (release page, API)",
        }
    return out
