"""What a release build writes for its benchmark-construction filters
(curation.releases.filters) and its balance report (curation.releases.balance).

- `held_out/held_out.jsonl`: one line per pair a filter kept aside (its ID,
  domain, filter, canonical label and content), beside the benchmark's files,
  never in them; the manifest's `held_out` names the file and its counts.
- provenance.jsonl: after the records' lines, one line per pair a filter or
  the balancing left out of the benchmark (`release_filter`, `action`); these
  lines hold no votes and are not counted in the manifest's `provenance`.
- the manifest's `release_filters` (each filter, its parameters, ensemble and
  counts per domain; the balancing's seed, tolerance and counts) and
  `balance_report` (side and length balance per domain), and the card's
  lines for both.

A fixed number of queries whatever the number of items (chunks of the
held-out content aside)."""

from __future__ import annotations

from pathlib import Path

from django.db.models.functions import Length

from curation.models.verdicts import SIDES
from curation.releases import balance, filters
from curation.releases.content import item_contents
from curation.releases.rekey import rekeyed_id

HELD_OUT_FILE = "held_out/held_out.jsonl"
CHUNK = 2000


def pair_lengths(verdicts) -> tuple[list[balance.PairLength], dict[int, str]]:
    """The verdicts' pairs (a better side of two) with their chosen and
    rejected responses' lengths in characters, and their external IDs: one query."""
    rows = (
        verdicts.filter(final_choice__in=SIDES)
        .order_by()
        .values_list(
            "item_id",
            "item__domain__slug",
            "item__external_id",
            "final_choice",
            Length("item__response_1"),
            Length("item__response_2"),
        )
    )
    pairs, external = [], {}
    for item_id, domain, ext, choice, n1, n2 in rows.iterator(chunk_size=CHUNK):
        chosen, rejected = (n1, n2) if choice == "1" else (n2, n1)
        pairs.append(balance.PairLength(item_id, domain, chosen or 0, rejected or 0))
        external[item_id] = ext
    return pairs, external


def balanced(release, included):
    """`included` less the pairs the seeded length balancing drops, the drops
    ({domain: [item id]}) and their external IDs ({item id: ID})."""
    spec = (release.filters or {}).get("balance") or {}
    if spec.get("tolerance") is None:
        return included, {}, {}
    pairs, external = pair_lengths(included)
    drops = balance.balance_drops(pairs, tolerance=spec["tolerance"], seed=spec["seed"])
    ids = [i for domain_ids in drops.values() for i in domain_ids]
    if not ids:
        return included, drops, {}
    return filters.without(included, ids), drops, {i: external[i] for i in ids}


def filtered_rows(release, before) -> list[tuple]:
    """(item id, external ID, domain, label, filter) of every pair a filter
    matched, sorted by domain and ID: one query (filters.matched_rows)."""
    return filters.matched_rows(before, release.filters)


def without_filtered(before, rows):
    """The benchmark's pairs: `before` less the matched ones."""
    return filters.without(before, [row[0] for row in rows])


def _shown_id(external_id: str, salt: str) -> str:
    """A re-keyed release shows no old ID, in held_out/ and provenance alike."""
    return rekeyed_id(salt, "heldout", external_id) if salt else external_id


def _action(release, name: str) -> str:
    return release.filters[name].get("action", filters.DEFAULT_ACTION[name])


def write_held_out(release, folder: Path, rows: list[tuple], salt: str) -> dict:
    """held_out/held_out.jsonl of the pairs a `hold` filter matched; the
    manifest's `held_out` entry ({} and no file when none is held)."""
    held = [r for r in rows if _action(release, r[4]) == "hold"]
    if not held:
        return {}
    from curation.releases.exporter import JsonLinesWriter

    writer = JsonLinesWriter(folder / HELD_OUT_FILE)
    counts: dict[str, dict[str, int]] = {}
    try:
        for start in range(0, len(held), CHUNK):
            chunk = held[start : start + CHUNK]
            contents = item_contents(r[0] for r in chunk)
            for item_id, ext, domain, choice, name in chunk:
                content = contents[item_id]
                writer.write(
                    {
                        "ID": _shown_id(ext, salt),
                        "domain": domain,
                        "release_filter": name,
                        "chosen_canonical": choice,
                        "prompt": content.prompt,
                        "responses": list(content.responses),
                    }
                )
                per = counts.setdefault(name, {})
                per[domain] = per.get(domain, 0) + 1
    finally:
        writer.close()
    return {"file": HELD_OUT_FILE, "total": len(held), "per_filter_and_domain": counts}


def provenance_lines(release, rows, balance_external: dict[int, str], salt: str) -> list[dict]:
    """provenance.jsonl's lines of the pairs left out of the benchmark."""
    lines = [
        {
            "ID": _shown_id(ext, salt),
            "domain": domain,
            "release_filter": name,
            "action": _action(release, name),
        }
        for _, ext, domain, _, name in rows
    ]
    spec = release.filters.get("balance") or {}
    lines += [
        {
            "ID": _shown_id(ext, salt),
            "release_filter": "length_balance",
            "action": "drop",
            "seed": spec.get("seed"),
            "tolerance": spec.get("tolerance"),
        }
        for ext in sorted(balance_external.values())
    ]
    return lines


def counts_of(rows) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for _, _, domain, _, name in rows:
        per = counts.setdefault(name, {})
        per[domain] = per.get(domain, 0) + 1
    return counts


def balancing_entry(release, drops: dict[str, list[int]]) -> dict | None:
    spec = release.filters.get("balance") or {}
    if spec.get("tolerance") is None:
        return None
    per_domain = {domain: len(ids) for domain, ids in sorted(drops.items())}
    return {
        "rule": "seeded sampling drops the fewest pairs that bring each domain's share of "
        "pairs whose chosen response is longer within the tolerance of 0.5",
        "action": "drop",
        "parameters": {"seed": spec["seed"], "tolerance": spec["tolerance"]},
        "dropped": sum(per_domain.values()),
        "dropped_per_domain": per_domain,
    }


def balance_report(verdicts, slots: dict[str, bool], ids_by_domain: dict[str, list[str]]) -> dict:
    """The manifest's `balance_report` of the released pairs."""
    pairs, external = pair_lengths(verdicts)
    released = set(external.values())
    domain_of = {ext: d for d, ids in ids_by_domain.items() for ext in ids if ext in released}
    return {
        "length": balance.length_report(pairs),
        "side": balance.side_report(
            {ext: first for ext, first in slots.items() if ext in domain_of}, domain_of
        ),
    }


def card_lines(report: dict | None, balancing: dict | None) -> list[str]:
    if not report:
        return []
    lines = []
    for domain, row in report["side"].items():
        length = report["length"].get(domain, {})
        lines.append(
            f"- Balance of {domain}: chosen response first in {row['chosen_first']} of "
            f"{row['pairs']} pairs ({100 * row['first_share']:.1f}%); chosen response longer "
            f"in {length.get('chosen_longer', 0)}, shorter in {length.get('chosen_shorter', 0)},"
            f" as long in {length.get('equal', 0)} "
            f"({100 * length.get('longer_share', 0):.1f}% longer)."
        )
    if balancing:
        per = "; ".join(f"{k}: {v}" for k, v in balancing["dropped_per_domain"].items()) or "none"
        p = balancing["parameters"]
        lines.append(
            f"- Length balancing: {balancing['dropped']} pair(s) dropped by seeded sampling "
            f"(seed {p['seed']}, tolerance {p['tolerance']:g} around 50% longer; per domain: "
            f"{per})."
        )
    return lines


TITLES = {
    "too_easy": "Too easy",
    "low_consensus": "Low consensus",
    "disagreement": "Humans and ensemble disagree",
    "length_balance": "Length balancing",
}


def _entry(e: dict) -> str:
    if e.get("on") == "project":
        return f"{e['name']} (project judge run #{e['judge_run']}, model {e['model']})"
    run = f", judge run #{e['judge_run']}" if e.get("judge_run") else ""
    return f"{e['name']} (evaluation #{e['evaluation']}{run})"


def page_rows(manifest: dict | None) -> list[dict]:
    """The release page's rows of its filters (from the manifest)."""
    rows = []
    for name, f in ((manifest or {}).get("release_filters") or {}).items():
        verb = "dropped" if f.get("action", "drop") == "drop" else "held_out"
        rows.append(
            {
                "title": TITLES.get(name, name),
                "rule": f.get("rule", ""),
                "action": "dropped" if verb == "dropped" else "kept aside (held_out/)",
                "parameters": ", ".join(f"{k} {v}" for k, v in f.get("parameters", {}).items()),
                "ensemble": ", ".join(_entry(e) for e in f.get("ensemble", [])),
                "count": f.get(verb, 0),
                "per_domain": "; ".join(
                    f"{k}: {v}" for k, v in f.get(f"{verb}_per_domain", {}).items()
                ),
            }
        )
    return rows
