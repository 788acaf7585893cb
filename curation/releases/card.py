"""The dataset card (README.md) of a release, generated from the data (DESIGN §7):
the frame (title, annotation, agreement, licence, files, loading) and each
benchmark's own section (curation.benchmarks: CardSection below). No Django
import.

Its YAML front matter holds `configs:` for the Hugging Face `datasets`
library, so `load_dataset(<release folder>)` reads the records (parquet/, or
the per-domain JSON without pyarrow) and `load_dataset(<folder>, "trl")` the
TRL rows (trl/), one split per domain; its text says how to train with TRL
(vision DPO, text-only DPO, reward modelling).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Protocol


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _label_quality_lines(f: dict | None) -> list[str]:
    """The card's line for the optional consensus-quality filter."""
    if not f:
        return []
    entries = ", ".join(f.get("entries") or []) or "none (votes only)"
    return [
        f"- Consensus-quality filter: items the rule agreed on were left out when CROWDLAB "
        f"(cleanlab) gave their label a probability below {f['min']} "
        f"({f['excluded']} left out; analysis of {f.get('computed_at') or 'n/a'}, "
        f"model ensemble: {entries}). Items a curator decided or reviewed were kept."
    ]


# Every config has this split: all its domains together (split="train").
ALL_SPLIT = "train"


def split_names(slugs: Iterable[str]) -> dict[str, str]:
    """A `datasets` split name per domain slug: split names are word characters
    (and dots), so a dash becomes an underscore; a name that clashes (with
    another domain's or with the all-domains split "train") gets a numeric
    suffix, in slug order."""
    out: dict[str, str] = {}
    used: set[str] = {ALL_SPLIT}
    for slug in slugs:
        name = re.sub(r"\W", "_", slug)
        base, n = name, 1
        while name in used:
            n += 1
            name = f"{base}_{n}"
        used.add(name)
        out[slug] = name
    return out


def configs_yaml(
    configs: Sequence[tuple[str, str]],
    domains: Sequence[str],
    own: dict[str, Sequence[str]] | None = None,
) -> list[str]:
    """YAML front matter `configs:` for the Hugging Face `datasets` library,
    the same shape for releases and training mixes: each (name, path pattern
    with {} for the domain) config has the split "train" (every domain) and
    one split per domain; `own` gives a config domains of its own."""
    lines = ["---", "configs:"]
    for name, pattern in configs:
        domains_of = (own or {}).get(name, domains)
        lines += _config_lines(name, pattern, domains_of)
    return [*lines, "---", ""]


def _config_lines(name: str, pattern: str, domains: Sequence[str]) -> list[str]:
    splits = split_names(domains)
    lines = [f"- config_name: {name}", "  data_files:", f"  - split: {ALL_SPLIT}", "    path:"]
    lines += [f"    - {pattern.format(slug)}" for slug in domains]
    for slug in domains:
        lines += [f"  - split: {splits[slug]}", f"    path: {pattern.format(slug)}"]
    return lines


def splits_line(domains: Sequence[str]) -> str:
    """The card's sentence naming the splits of every config."""
    names = ", ".join(f"`{name}`" for name in split_names(domains).values())
    return (
        f'Splits (every config): `{ALL_SPLIT}` (every domain together, `split="{ALL_SPLIT}"`) '
        f"and one per domain: {names}."
    )


def card_configs(
    domains: Sequence[str], *, parquet: bool, trl: bool, pairwise: Sequence[str] = ()
) -> list[str]:
    """The card's YAML front matter, so load_dataset(<release folder>) reads
    the records (without it, it would take the folder for an image folder
    labelled by domain). The default config is the benchmark records:
    parquet/ (the per-domain JSON where there is no parquet); `trl` is trl/,
    named only where the release has it; `pairwise` is pairwise/ (the ranked
    items' pairs, its own domains), named only where the release has it."""
    default = "parquet/{}.parquet" if parquet else "{}.json"
    configs = []
    if domains:
        configs = [("default", default)] + ([("trl", "trl/{}.parquet")] if trl else [])
    if pairwise:
        configs.append(("pairwise", "pairwise/{}.parquet"))
    return configs_yaml(configs, domains, own={"pairwise": pairwise})


def pairwise_lines(section: dict | None) -> list[str]:
    """The card's paragraph on the pairwise decomposition (issue 33), from
    the manifest's `pairwise` section; nothing without one."""
    if not section:
        return []
    counts = ", ".join(f"{slug} {n}" for slug, n in section["pairs"].items()) or "none"
    items = sum(section["items"].values())
    return [
        "",
        "## Pairwise decomposition for training",
        "",
        f"The ranked and best-of-N items ({items}) are also split into preference pairs, "
        f"**{section['mode_title']}** (`{section['mode']}`): {section['rule']}. "
        f"`pairwise/<domain>.parquet` holds them in the same TRL conversational layout as "
        f"`trl/` (row ID: `<item ID>:<chosen slot>><rejected slot>`, canonical slots). "
        f"Pairs per domain: {counts}.",
        "",
        "```python",
        'pairs = load_dataset("path/to/this/folder", "pairwise", split="train")',
        "```",
    ]


def dataset_card(meta: Any, summary: dict, *, parquet: bool = False, trl: bool = False) -> str:
    """README.md generated from the data, in the terms of each benchmark
    whose files the release holds (meta.card_sections: curation.benchmarks,
    each a CardSection, see below); the first benchmark (the records of the
    pair layout) speaks when none holds anything."""
    titles = {slug: title for slug, title, _ in meta.domains}
    sections = [benchmark.card(meta, summary) for benchmark in meta.card_sections]
    shown = [section for section in sections if section.holds] or sections[:1]
    mixed = len(shown) > 1
    with_records = [slug for slug, n in summary["counts"].items() if n]
    decomposed = meta.manifest_extra.get("pairwise")
    pairwise = decomposed["pairs"] if decomposed else {}
    with_pairs = [slug for slug, _, _ in meta.domains if slug in pairwise]
    lines = (
        card_configs(with_records, parquet=parquet, trl=trl, pairwise=with_pairs)
        if with_records or with_pairs
        else []
    )
    lines += [f"# {meta.project_name} — release {meta.version}", ""]
    if mixed:
        phrases = [section.phrase() for section in shown]
        lines += [
            "Expert-annotated preference data for multimodal reward models and judges, in "
            f"{_NUMBERS.get(len(shown), len(shown))} formats: "
            + ", ".join(phrases[:-1])
            + f" and {phrases[-1]}.",
            "",
        ]
    else:
        lines += [shown[0].intro(), ""]
    if meta.notes:
        lines += [meta.notes, ""]
    # One section per format the release holds.
    for section in shown:
        own = section.lines(mixed=mixed, others=[o for o in shown if o is not section])
        if own and own[0] == "" and lines[-1] == "":
            lines.pop()  # the section opens with its own blank line
        lines += own
    ann = meta.annotation
    rule = any(section.states_consensus_rule for section in shown)
    lines += ["", "## How it was annotated", "", *_annotation_lines(ann, consensus_rule=rule)]
    lines += ["", "## Agreement"]
    graded = graded_agreement_lines(
        [(slug, titles.get(slug, slug)) for slug, _, _ in meta.domains], meta.agreement
    )
    # Else the graded table has the binary collapse.
    if any(section.shows_nominal_alpha for section in shown) or not graded:
        lines += [
            "",
            "Krippendorff's alpha (nominal) on canonical choices, with item-bootstrap 95% "
            "intervals:",
            "",
            "| domain | alpha | 95% CI |",
            "|---|---:|---|",
        ]
        for key, row in meta.agreement.items():
            lines.append(
                f"| {titles.get(key, key)} | {row.get('alpha', 'n/a')} | {row.get('ci', 'n/a')} |"
            )
    lines += graded
    if meta.manifest_extra.get("id_rekey"):
        lines += ["", "IDs are re-keyed: label-free, stable across this project's releases."]
    files = "".join(section.files(parquet=parquet, trl=trl) for section in shown)
    absent = [line for s in sections if s not in shown for line in s.absent_lines()]
    lines += [
        "",
        f"Decision provenance: {_provenance_counts(summary['provenance'])}. Per-record votes, "
        "annotator pseudonyms and curator reasons are in `provenance.jsonl`.",
        "",
        "## Licence",
        "",
        meta.licence or "Not specified by the project.",
        "",
        "## Files",
        "",
        files + "`provenance.jsonl`, `manifest.json` (counts and the sha256 of every file).",
        *absent,
        "",
    ]
    lines += shown[0].loading(with_records, parquet=parquet, trl=trl)
    lines += pairwise_lines(decomposed)
    return "\n".join(lines)


_NUMBERS = {2: "two", 3: "three", 4: "four", 5: "five"}


class CardSection(Protocol):
    """What a benchmark says in a release's card (its `card(meta, summary)`)."""

    holds: bool  # the release holds files of this benchmark
    states_consensus_rule: bool  # its benchmark states the rule: the card says ours
    shows_nominal_alpha: bool  # the nominal alpha table speaks to its labels

    def intro(self) -> str: ...  # the card's opening sentence when alone
    def phrase(self) -> str: ...  # its part of the opening sentence beside others
    def owns(self, category: str) -> bool: ...  # a domain whose items are its own
    def lines(self, *, mixed: bool, others: Sequence[Any]) -> list[str]: ...
    def files(self, *, parquet: bool, trl: bool) -> str: ...
    def absent_lines(self) -> list[str]: ...  # said when it holds nothing beside others
    def loading(self, domains: Sequence[str], *, parquet: bool, trl: bool) -> list[str]: ...


def graded_agreement_lines(rows: Sequence[tuple[str, str]], agreement: dict) -> list[str]:
    """Graded alpha per domain (ordinal, interval, the binary collapse) with
    their intervals; nothing when no domain has graded figures."""
    rows = [(key, title) for key, title in rows if "graded" in agreement.get(key, {})]
    if not rows:
        return []
    scale = agreement[rows[0][0]]["graded"]["scale"]
    lines = [
        "",
        f"Krippendorff's alpha of the graded votes ({scale}, points oriented to response A "
        "whatever side it was shown on), with item-bootstrap 95% intervals: ordinal (the "
        "order of the points only), interval (equally spaced points) and the binary collapse "
        "(nominal, A / B / tie):",
        "",
        "| domain | graded votes | alpha ordinal | 95% CI | alpha interval | 95% CI | "
        "alpha binary | 95% CI |",
        "|---|---:|---:|---|---:|---|---:|---|",
    ]
    for key, title in rows:
        entry = agreement[key]
        g = entry["graded"]
        lines.append(
            f"| {title} | {g['n_values']} | {g['ordinal']['alpha']} | {g['ordinal']['ci']} | "
            f"{g['interval']['alpha']} | {g['interval']['ci']} | {entry['alpha']} | "
            f"{entry['ci']} |"
        )
    return lines


def _provenance_counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in counts.items()) or "no members"


def _annotation_lines(ann: dict, *, consensus_rule: bool) -> list[str]:
    """How the labels came about, from what happened (curation.releases.
    manifest_sections.annotation): no sentence about votes when none were
    collected, escalation only when an item was escalated, imported gold and
    reviewed labels only when there are some."""
    lines = []
    if ann.get("n_votes"):
        per_item = f"- Votes per item: {ann.get('votes_per_item', 'n/a')}"
        escalated = ann.get("escalated", 0)
        if escalated:
            per_item += (
                f" ({escalated} split item{'' if escalated == 1 else 's'} escalated for up "
                f"to {ann.get('escalation_votes', 'n/a')} more)"
            )
        lines += [
            per_item + ".",
            f"- Annotators: {ann.get('n_annotators', 'n/a')}; votes collected: "
            f"{ann.get('n_votes', 'n/a')}. Display order was randomised per vote and every "
            "statistic uses canonical (not displayed) choices.",
        ]
    else:
        lines.append("- No votes were collected in the studio for these items.")
    rule = _rule_line(ann, consensus_rule=consensus_rule)
    if rule:
        lines.append(rule)
    decisions = (
        f"- Items agreed by the rule: {ann.get('agreed', 0)}; adjudicated by a curator: "
        f"{ann.get('adjudicated', 0)} ({_pct(ann.get('adjudicated_share'))}); "
    )
    if ann.get("reviewed"):
        decisions += f"confirmed in the label-quality review: {ann['reviewed']}; "
    if ann.get("gold"):
        sources = "; ".join(ann.get("gold_sources") or [])
        decisions += f"imported gold: {ann['gold']}" + (f" ({sources})" if sources else "") + "; "
    decisions += f"excluded: {ann.get('excluded', 0)} ({_pct(ann.get('excluded_share'))})."
    from curation.releases import filter_outputs
    from curation.releases.filters import card_lines

    filters = ann.get("release_filters") or {}
    return [
        *lines,
        decisions,
        *_label_quality_lines(ann.get("label_quality_filter")),
        *card_lines(filters),
        *filter_outputs.card_lines(ann.get("balance_report"), filters.get("length_balance")),
    ]


def _rule_line(ann: dict, *, consensus_rule: bool) -> str:
    """The consensus rule, for graded projects that set one and for releases
    holding a benchmark that states its own (CardSection.states_consensus_rule)."""
    least = ann.get("consensus_strength")
    if least is not None:
        return (
            f"- Consensus rule: an item is agreed only when every vote is on one side and "
            f"their mean strength is at least {least:g} (1 slightly, 2 better, 3 much "
            "better); any other item went to a curator, never to more votes."
        )
    if not consensus_rule or "agree_share" not in ann:
        return ""
    return (
        f"- Consensus rule: an item is agreed when at least {100 * ann['agree_share']:g}% of "
        "its votes pick one side (or only ties dissent); other items went to a curator"
        + (" after escalation." if ann.get("escalated") else ".")
    )


def loading_lines(domains: Sequence[str], *, parquet: bool, trl: bool) -> list[str]:
    """The card's "Loading" section: `datasets`, TRL (vision and text-only DPO,
    reward modelling) and the dpo/ files."""
    split = ALL_SPLIT
    lines = [
        "## Loading",
        "",
        "The front matter's `configs:` make the Hugging Face `datasets` library read this "
        "folder as it is, from any working directory (give the folder's path). The "
        "`default` config is the benchmark records"
        + (", `trl` the TRL preference rows" if trl else "")
        + ". "
        + splits_line(domains)
        + " Domains without records have no split.",
        "",
    ]
    if not (parquet and trl):
        lines += [
            "This release was built where pyarrow was not installed: it has no `parquet/` "
            "and no `trl/` copies, so the `default` config reads the per-domain JSON and "
            "there is no `trl` config. Build it again with pyarrow installed (a runtime "
            "dependency of the studio) for them.",
            "",
        ]
    lines += [
        "```python",
        "from datasets import load_dataset",
        'records = load_dataset("path/to/this/folder")'
        + ("  # parquet/, images embedded" if parquet else "  # the per-domain JSON"),
    ]
    if trl:
        lines += ['pairs = load_dataset("path/to/this/folder", "trl")  # trl/, for TRL']
    lines += ["```", ""]
    if trl:
        lines += [
            "`trl/<domain>.parquet` holds conversational preference rows: `id`, `prompt` "
            '(`[{"role": "user", "content": ...}]`), `chosen` and `rejected` (one assistant '
            "message each), `images` (the embedded image, decoded by `datasets`) and "
            "`category`. Contents are plain strings: TRL adds the image placeholder to the "
            "prompt itself.",
            "",
            "Vision DPO (a vision-language model and its processor). Leave `max_length` at "
            "`None`: truncating would cut image tokens and break the model's inputs.",
            "",
            "```python",
            "from trl import DPOConfig, DPOTrainer",
            'train = load_dataset("path/to/this/folder", "trl", split="' + split + '")',
            "trainer = DPOTrainer(model=model, processing_class=processor, train_dataset=train,",
            '                     args=DPOConfig(output_dir="out", max_length=None))',
            "```",
            "",
            "Text-only DPO, and reward modelling (`RewardTrainer` takes text only): drop the "
            "images first.",
            "",
            "```python",
            "from trl import RewardConfig, RewardTrainer",
            'text = train.remove_columns("images")',
            "trainer = DPOTrainer(model=text_model, processing_class=tokenizer,",
            '                     train_dataset=text, args=DPOConfig(output_dir="out"))',
            "trainer = RewardTrainer(model=reward_model, processing_class=tokenizer,",
            '                        train_dataset=text, args=RewardConfig(output_dir="out"))',
            "```",
            "",
        ]
    lines += [
        "`dpo/<domain>.jsonl` has the same pairs in the same schema (chat messages, as in "
        "`trl/` and in a training mix's `dpo/`), with `images` as paths relative to the "
        "`.jsonl` file (`../images/...`); join them with the file's folder before opening "
        "or casting them:",
        "",
        "```python",
        "import os",
        "from datasets import Image, List, load_dataset",
        'path = "path/to/this/folder/dpo/' + (domains[0] if domains else "<domain>") + '.jsonl"',
        'ds = load_dataset("json", data_files=path, split="train")',
        'ds = ds.map(lambda r: {"images": [os.path.join(os.path.dirname(path), p) '
        'for p in r["images"]]})',
        'ds = ds.cast_column("images", List(Image()))',
        "```",
        "",
    ]
    return lines
