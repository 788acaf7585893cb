"""Benchmark-construction filters on a release (issue 36 item 4), after the
pattern of curation.quality.release_filter.

Three filters, each of which drops its pairs or keeps them aside (written to
the release's `held_out/`, never into a benchmark's files):

- "too easy": every entry of a chosen ensemble picked the released label (the
  verdict's final choice) in both orders. An entry that did not predict the
  item, or not in the swapped order, does not get it right: the item is kept.
- "low consensus": the human consensus -- the share of the item's current,
  non-imported votes that name its most-voted choice -- is below a threshold.
  An item without such votes (imported gold) has no consensus and is kept.
- "disagreement": the humans' majority choice and the ensemble's majority
  side differ while both are strong: human consensus >= h and the ensemble's
  share >= e. Each entry's pick in each order it answered is one ensemble
  vote. h and e are above one half, so each majority is unique.

The ensemble is a set of the project's evaluations (uploaded predictions and
finished judge runs scored against one of its releases) and of its complete
project-level judge runs (JudgeVote rows), read per item in canonical terms
by `ensemble_predictions`, the one reader: one statement (a UNION ALL) whose
rows are filter_rules.Prediction, a project run's entry id being minus the
run's id (as the label-error audit names its labellers).
A pair several filters match counts once, under the first in FILTER_ORDER.

All of it is set-based: one CASE expression names each verdict's filter
(`filter_outcome`) from grouped subqueries the database runs once each, so a
filter pass is a fixed number of queries whatever the number of items, never
a query per item (nor a subquery per item: see with_outcome)."""

from __future__ import annotations

from django.db import connection
from django.db.models import (
    BigIntegerField,
    Case,
    CharField,
    Count,
    F,
    FloatField,
    Lookup,
    Q,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Cast, Greatest

from annotate.models import Judgement
from curation.models import Evaluation, ItemPrediction
from curation.releases import filter_rules
from curation.releases.ensemble import (
    EnsembleError,
    check_judge_runs,
    ensemble_rows,
    entry_label,
    judge_run_entries,
)
from curation.releases.service import ReleaseError

FILTER_ORDER = ("too_easy", "low_consensus", "disagreement")
ACTIONS = ("drop", "hold")
# Kept aside for review unless the curator asks otherwise (issue 36).
DEFAULT_ACTION = {"too_easy": "drop", "low_consensus": "drop", "disagreement": "hold"}
RULES = {
    "too_easy": "every ensemble entry picked the released label in both orders",
    "low_consensus": "share of current studio votes for the most-voted choice < threshold",
    "disagreement": "human majority differs from the ensemble majority, human consensus >= "
    "human and ensemble share >= ensemble",
}


def ensemble_predictions(evaluation_ids):
    """The evaluations' per-item predictions (canonical sides): the SQL
    reference form's source (with_outcome reads evaluations only)."""
    return ItemPrediction.objects.filter(evaluation_id__in=evaluation_ids)


def entry_ids(spec: dict) -> set[int]:
    """A filter's ensemble as the rules name its entries: evaluation ids and
    minus each project judge run's id."""
    return filter_rules.entry_ids(spec)


def check_ensemble(
    *, project, evaluation_ids, what: str = "too-easy", field: str = "too_easy_ensemble"
) -> list[int]:
    ids = sorted({int(i) for i in evaluation_ids})
    found = set(
        Evaluation.objects.filter(pk__in=ids, release__project=project).values_list("pk", flat=True)
    )
    missing = sorted(set(ids) - found)
    if missing:
        raise EnsembleError(
            f"Unknown evaluation(s) for the {what} ensemble: {', '.join(map(str, missing))}.",
            field,
        )
    return ids


def _ensemble(project, evaluation_ids, run_ids, what: str, prefix: str) -> dict:
    """{"evaluations": [...], "judge_runs": [...]} (the key only when runs
    are chosen, so an evaluation-only filter is recorded as before)."""
    if not evaluation_ids and not run_ids:
        raise EnsembleError(
            f"Choose at least one entry for the {what} ensemble.", f"{prefix}_ensemble"
        )
    spec = {
        "evaluations": check_ensemble(
            project=project, evaluation_ids=evaluation_ids or [], what=what,
            field=f"{prefix}_ensemble",
        )
    }  # fmt: skip
    runs = check_judge_runs(
        project=project, run_ids=run_ids, what=what, field=f"{prefix}_judge_runs"
    )
    if runs:
        spec["judge_runs"] = runs
    return spec


def check_too_easy(*, project, evaluation_ids) -> list[int]:
    return _ensemble(project, evaluation_ids, None, "too-easy", "too_easy")["evaluations"]


def _action(name: str, action: str | None) -> str:
    action = action or DEFAULT_ACTION[name]
    if action not in ACTIONS:
        raise ReleaseError(f"Unknown action {action!r} for the {name} filter: drop or hold.")
    return action


def _share(value, name: str, *, above_half: bool = False) -> float:
    value = float(value)
    ok = 0.5 < value <= 1 if above_half else 0 <= value <= 1
    if not ok:
        bound = "above 0.5 and at most 1" if above_half else "between 0 and 1"
        raise ReleaseError(f"The {name} must be {bound} (got {value:g}).")
    return value


def check_filters(
    *,
    project,
    seed: int,
    too_easy_ensemble=None,
    too_easy_judge_runs=None,
    too_easy_action: str | None = None,
    low_consensus: float | None = None,
    low_consensus_action: str | None = None,
    disagreement_ensemble=None,
    disagreement_judge_runs=None,
    disagreement_human: float | None = None,
    disagreement_share: float | None = None,
    disagreement_action: str | None = None,
    balance_report: bool = False,
    balance_tolerance: float | None = None,
) -> dict:
    """Release.filters from the form's or the API's fields: the one
    validation both go through (ReleaseError says what is wrong)."""
    filters: dict = {}
    if too_easy_ensemble or too_easy_judge_runs:
        ensemble = _ensemble(
            project, too_easy_ensemble, too_easy_judge_runs, "too-easy", "too_easy"
        )
        filters["too_easy"] = {**ensemble, "action": _action("too_easy", too_easy_action)}
    if low_consensus is not None:
        filters["low_consensus"] = {
            "threshold": _share(low_consensus, "low-consensus threshold"),
            "action": _action("low_consensus", low_consensus_action),
        }
    if disagreement_ensemble or disagreement_judge_runs:
        ensemble = _ensemble(
            project, disagreement_ensemble, disagreement_judge_runs, "disagreement", "disagreement"
        )
        filters["disagreement"] = {
            **ensemble,
            "human": _share(
                0.8 if disagreement_human is None else disagreement_human,
                "disagreement's human consensus",
                above_half=True,
            ),
            "ensemble": _share(
                0.8 if disagreement_share is None else disagreement_share,
                "disagreement's ensemble share",
                above_half=True,
            ),
            "action": _action("disagreement", disagreement_action),
        }
    elif disagreement_human is not None or disagreement_share is not None:
        raise ReleaseError("Choose the disagreement filter's ensemble, or leave its shares empty.")
    if balance_tolerance is not None:
        tolerance = float(balance_tolerance)
        if not 0 <= tolerance < 0.5:
            raise ReleaseError(f"The balance tolerance must be in [0, 0.5) (got {tolerance:g}).")
        filters["balance"] = {"tolerance": tolerance, "seed": seed}
    elif balance_report or filters:
        filters["balance"] = {"tolerance": None, "seed": seed}  # the report only
    return filters


def _too_easy_items(ids, items):
    """The items every ensemble entry got right (their verdict's final
    choice) in both orders."""
    label = F("item__verdict__final_choice")
    return (
        ensemble_predictions(ids)
        .filter(item_id__in=items, has_swapped=True, choice=label, swapped_choice=label)
        .order_by()
        .values("item_id")
        .annotate(n=Count("evaluation_id", distinct=True))
        .filter(n__gte=len(ids))
        .values("item_id")
    )


def _float(name: str):
    return Cast(name, FloatField())


def _human(items):
    """Per item: its current studio votes (h_n) and those per pair choice."""
    return (
        Judgement.objects.filter(assignment__item_id__in=items, is_current=True, imported=False)
        .order_by()
        .values("assignment__item_id")
        .annotate(
            h_n=Count("pk"),
            h_1=Count("pk", filter=Q(choice="1")),
            h_2=Count("pk", filter=Q(choice="2")),
            h_tie=Count("pk", filter=Q(choice="tie")),
        )
        .filter(h_n__gt=0)
    )


def _low_consensus_items(threshold: float, items):
    top = Greatest(_float("h_1"), _float("h_2"), _float("h_tie"))
    return (
        _human(items)
        .alias(h_top=top, h_all=_float("h_n"))
        .filter(h_top__lt=F("h_all") * threshold)
        .values("assignment__item_id")
    )


def _human_majority_items(choices: tuple[str, ...], share: float, items):
    """Items whose current studio votes name one of `choices` at least
    `share` of the time (share > 0.5: that choice is the majority)."""
    strong = Q()
    for choice in choices:
        strong |= Q(**{f"h_{choice}_f__gte": F("h_all") * share})
    return (
        _human(items)
        .alias(h_all=_float("h_n"), **{f"h_{c}_f": _float(f"h_{c}") for c in choices})
        .filter(strong)
        .values("assignment__item_id")
    )


def _ensemble_majority_items(ids, side: str, share: float, items):
    """Items whose ensemble votes (each entry's pick in each order) name
    `side` at least `share` of the time."""
    swapped = Case(When(has_swapped=True, then=Value(1)), default=Value(0))
    picked = Case(When(choice=side, then=Value(1)), default=Value(0)) + Case(
        When(has_swapped=True, swapped_choice=side, then=Value(1)), default=Value(0)
    )
    return (
        ensemble_predictions(ids)
        .filter(item_id__in=items)
        .order_by()
        .values("item_id")
        .annotate(e_n=Sum(Value(1) + swapped), e_side=Sum(picked))
        .alias(e_all=_float("e_n"), e_got=_float("e_side"))
        .filter(e_all__gt=0, e_got__gte=F("e_all") * share)
        .values("item_id")
    )


def _disagreement(spec: dict, items) -> Q:
    """Strong human majority and strong ensemble majority on different
    choices: the ensemble's side 2 with the humans' 1 or tie, or its side 1
    with the humans' 2 or tie (four grouped subqueries, each read once)."""
    ids, h, e = set(spec["evaluations"]), spec["human"], spec["ensemble"]

    def ensemble(side):
        return Q(item_id__in=_ensemble_majority_items(ids, side, e, items))

    def human(*choices):
        return Q(item_id__in=_human_majority_items(choices, h, items))

    return (ensemble("2") & human("1", "tie")) | (ensemble("1") & human("2", "tie"))


def with_outcome(verdicts, filters: dict | None, *, select: bool = False):
    """The verdicts with `filter_outcome`: the first filter of FILTER_ORDER
    that matches each, or "" (kept). Aliases only (nothing more is selected)
    unless `select`. Each filter is an uncorrelated `IN (grouped subquery)`,
    which the database computes once for the whole set (a hashed subplan),
    not once per verdict."""
    filters = filters or {}
    if any("judge_runs" in (filters.get(name) or {}) for name in FILTER_ORDER):
        raise ValueError("The SQL reference form reads evaluations only (see matched_rows).")
    items = verdicts.values("item_id")
    whens = []
    if "too_easy" in filters:
        ids = set(filters["too_easy"]["evaluations"])
        whens.append(When(item_id__in=_too_easy_items(ids, items), then=Value("too_easy")))
    if "low_consensus" in filters:
        low = _low_consensus_items(filters["low_consensus"]["threshold"], items)
        whens.append(When(item_id__in=low, then=Value("low_consensus")))
    if "disagreement" in filters:
        whens.append(
            When(_disagreement(filters["disagreement"], items), then=Value("disagreement"))
        )
    outcome = (
        Case(*whens, default=Value(""), output_field=CharField())
        if whens
        else Value("", output_field=CharField())
    )
    if select:
        return verdicts.annotate(filter_outcome=outcome)
    return verdicts.alias(filter_outcome=outcome)


def matched_rows(verdicts, filters: dict | None) -> list[tuple]:
    """(item id, external ID, domain, label, filter) of every verdict a
    filter matches, sorted by domain and ID: the verdicts, their items'
    studio-vote tallies and the ensembles' predictions read once each (three
    queries at most), the rules applied by curation.releases.filter_rules.
    Equal to `with_outcome` (the tests hold both), whose six grouped
    subqueries took 5x longer at 100,000 items."""
    filters = filters or {}
    if not any(name in filters for name in FILTER_ORDER):
        return []
    rows = list(
        verdicts.order_by("item__domain__slug", "item__external_id").values_list(
            "item_id", "item__external_id", "item__domain__slug", "final_choice"
        )
    )
    items = verdicts.values("item_id")
    humans = {}
    if "low_consensus" in filters or "disagreement" in filters:
        tallies = _human(items).values_list("assignment__item_id", "h_n", "h_1", "h_2", "h_tie")
        humans = {row[0]: filter_rules.Human(*row[1:]) for row in tallies}
    ids = {i for name in ("too_easy", "disagreement") for i in entry_ids(filters.get(name, {}))}
    predictions = list(ensemble_rows(ids, items)) if ids else []
    labels = {row[0]: row[3] for row in rows}
    matched = filter_rules.outcomes(labels, filters, humans, predictions)
    return [(*row, matched[row[0]]) for row in rows if row[0] in matched]


def matched_rows_sql(verdicts, filters: dict | None) -> list[tuple]:
    """matched_rows as one SQL statement (with_outcome): the reference form."""
    if not any(name in (filters or {}) for name in FILTER_ORDER):
        return []
    return list(
        with_outcome(verdicts, filters, select=True)
        .exclude(filter_outcome="")
        .order_by("item__domain__slug", "item__external_id")
        .values_list(
            "item_id", "item__external_id", "item__domain__slug", "final_choice", "filter_outcome"
        )
    )


def without(verdicts, item_ids):
    """`verdicts` less those of `item_ids`. On PostgreSQL the ids go as one
    array (item_id = ANY(%s)): as a list, each would be a bound parameter,
    and a statement holds at most 65,535 (server-side binding); SQLite
    allows 250,000 variables."""
    item_ids = sorted(set(item_ids))
    if not item_ids:
        return verdicts
    if connection.vendor != "postgresql":
        return verdicts.exclude(item_id__in=item_ids)
    from django.contrib.postgres.fields import ArrayField

    ids = Value(item_ids, output_field=ArrayField(BigIntegerField()))
    return verdicts.exclude(EqualsAny(F("item_id"), ids))


class EqualsAny(Lookup):
    """lhs = ANY(rhs), rhs an array (PostgreSQL), as curation.grid.filters'."""

    lookup_name = "equals_any"

    def as_sql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        return f"{lhs} = ANY({rhs})", [*lhs_params, *rhs_params]


def kept(verdicts, filters: dict | None):
    """The verdicts no filter matches (the release's benchmark pairs): the
    matched ones are read once (matched_rows), then left out by id."""
    if not any(name in (filters or {}) for name in FILTER_ORDER):
        return verdicts
    return without(verdicts, [row[0] for row in matched_rows(verdicts, filters)])


def exclude_too_easy(verdicts, evaluation_ids):
    return kept(verdicts, {"too_easy": {"evaluations": list(evaluation_ids)}})


def only_too_easy(verdicts, evaluation_ids):
    ids = set(evaluation_ids)
    return verdicts.filter(item_id__in=_too_easy_items(ids, verdicts.values("item_id")))


def outcome_counts(verdicts, filters: dict) -> dict[str, dict[str, int]]:
    """{filter: {domain: pairs}} of the matched verdicts: one query."""
    rows = (
        with_outcome(verdicts, filters, select=True)
        .exclude(filter_outcome="")
        .order_by()
        .values_list("filter_outcome", "item__domain__slug")
        .annotate(n=Count("pk"))
    )
    counts: dict[str, dict[str, int]] = {}
    for name, domain, n in rows:
        counts.setdefault(name, {})[domain] = n
    return counts


def ensemble_entries(ids) -> list[dict]:
    """The ensemble as the manifest names it: evaluation, name, release, judge run."""
    rows = (
        Evaluation.objects.filter(pk__in=ids)
        .order_by("pk")
        .values("pk", "name", "release__version", "judge_run__pk")
    )
    return [
        {
            "evaluation": e["pk"],
            "name": e["name"],
            "release": e["release__version"],
            "judge_run": e["judge_run__pk"],
        }
        for e in rows
    ]


def summary(release, verdicts=None, counts=None) -> dict:
    """The manifest's `release_filters`: each filter's rule, parameters,
    action, ensemble and counts per domain (`counts` as outcome_counts gives
    them, else counted from `verdicts`, the verdicts before the filters)."""
    if counts is None:
        counts = outcome_counts(verdicts, release.filters)
    out: dict = {}
    for name in FILTER_ORDER:
        spec = release.filters.get(name)
        if spec is None:
            continue
        per_domain = dict(sorted(counts.get(name, {}).items()))
        entry = {
            "rule": RULES[name],
            "action": spec.get("action", DEFAULT_ACTION[name]),
            "parameters": {
                k: v for k, v in spec.items() if k not in ("action", "evaluations", "judge_runs")
            },
        }
        if "evaluations" in spec:
            entry["ensemble"] = ensemble_entries(spec["evaluations"])
            if spec.get("judge_runs"):
                entry["ensemble"] += judge_run_entries(spec["judge_runs"])
        verb = "dropped" if entry["action"] == "drop" else "held_out"
        entry[verb] = sum(per_domain.values())
        entry[f"{verb}_per_domain"] = per_domain
        out[name] = entry
    return out


def card_lines(filters: dict | None) -> list[str]:
    lines = []
    for name in FILTER_ORDER:
        f = (filters or {}).get(name)
        if not f:
            continue
        verb = "dropped" if f["action"] == "drop" else "held_out"
        done = "were dropped" if verb == "dropped" else "were kept aside in `held_out/`"
        per = "; ".join(f"{k}: {v}" for k, v in f[f"{verb}_per_domain"].items()) or "none"
        params = ", ".join(f"{k} {v:g}" for k, v in f.get("parameters", {}).items())
        names = ", ".join(entry_label(e) for e in f.get("ensemble", []))
        if name == "too_easy":
            what = f"pair(s) every entry of the ensemble ({names}) got right in both orders"
            title = "Too-easy filter"
        elif name == "low_consensus":
            what = f"pair(s) whose human consensus was below {params.split()[-1]}"
            title = "Low-consensus filter"
        else:
            what = f"pair(s) where humans and the ensemble ({names}) strongly disagreed ({params})"
            title = "Disagreement filter"
        lines.append(f"- {title}: {f[verb]} {what} {done} (per domain: {per}).")
    return lines
