"""Benchmark-construction filters on a release (issue 36 item 4), after the
pattern of curation.quality.release_filter.

"Too easy": leave out a pair every entry of a chosen ensemble gets right in
both orders. The ensemble is a set of the project's evaluations (uploaded
predictions and finished judge runs scored against a release), read per item
in canonical terms from ItemPrediction by `ensemble_predictions` -- the one
reader, so judge runs on a project can be added there later. An entry gets an
item right in both orders when it answered the swapped order too and both its
picks equal the released label (the verdict's final choice). An entry that did
not predict the item does not get it right: the item is kept.

All of it is set-based (one subquery per filter), never a query per item."""

from __future__ import annotations

from django.db.models import Count, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce

from curation.models import Evaluation, ItemPrediction
from curation.releases.service import ReleaseError


def ensemble_predictions(evaluation_ids):
    """The ensemble's per-item predictions (canonical sides)."""
    return ItemPrediction.objects.filter(evaluation_id__in=evaluation_ids)


def check_too_easy(*, project, evaluation_ids) -> list[int]:
    ids = sorted({int(i) for i in evaluation_ids})
    if not ids:
        raise ReleaseError("Choose at least one entry for the too-easy ensemble.")
    found = set(
        Evaluation.objects.filter(pk__in=ids, release__project=project).values_list("pk", flat=True)
    )
    missing = sorted(set(ids) - found)
    if missing:
        raise ReleaseError(
            f"Unknown evaluation(s) for the too-easy ensemble: {', '.join(map(str, missing))}."
        )
    return ids


def _right_both_orders(ids):
    """Per verdict: how many ensemble entries picked its label in both orders."""
    right = (
        ensemble_predictions(ids)
        .filter(
            item_id=OuterRef("item_id"),
            has_swapped=True,
            choice=OuterRef("final_choice"),
            swapped_choice=OuterRef("final_choice"),
        )
        .order_by()
        .values("item_id")
        .annotate(n=Count("evaluation_id", distinct=True))
        .values("n")
    )
    return Coalesce(Subquery(right, output_field=IntegerField()), Value(0))


def exclude_too_easy(verdicts, evaluation_ids):
    ids = set(evaluation_ids)
    return verdicts.alias(too_easy_n=_right_both_orders(ids)).exclude(too_easy_n__gte=len(ids))


def only_too_easy(verdicts, evaluation_ids):
    ids = set(evaluation_ids)
    return verdicts.alias(too_easy_n=_right_both_orders(ids)).filter(too_easy_n__gte=len(ids))


def summary(release, verdicts) -> dict:
    """The manifest's `release_filters` entry: parameters, ensemble, counts per domain."""
    ids = release.filters["too_easy"]["evaluations"]
    entries = list(
        Evaluation.objects.filter(pk__in=ids)
        .order_by("pk")
        .values("pk", "name", "release__version")
    )
    per_domain = dict(
        only_too_easy(verdicts, ids)
        .order_by()
        .values_list("item__domain__slug")
        .annotate(n=Count("pk"))
    )
    dropped = sum(per_domain.values())
    return {
        "too_easy": {
            "rule": "left out: every ensemble entry picked the released label in both orders",
            "action": "drop",
            "ensemble": [
                {"evaluation": e["pk"], "name": e["name"], "release": e["release__version"]}
                for e in entries
            ],
            "dropped": dropped,
            "dropped_per_domain": dict(sorted(per_domain.items())),
        }
    }


def card_lines(filters: dict | None) -> list[str]:
    if not filters or "too_easy" not in filters:
        return []
    f = filters["too_easy"]
    names = ", ".join(f"{e['name']} (#{e['evaluation']})" for e in f["ensemble"])
    per = "; ".join(f"{k}: {v}" for k, v in f["dropped_per_domain"].items()) or "none"
    return [
        f"- Too-easy filter: {f['dropped']} pair(s) every entry of the ensemble ({names}) "
        f"got right in both orders were dropped (per domain: {per})."
    ]
