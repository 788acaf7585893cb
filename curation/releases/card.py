"""The dataset card (README.md) of a release, generated from the data (DESIGN §7).
No Django import.

Its YAML front matter holds `configs:` for the Hugging Face `datasets`
library, so `load_dataset(<release folder>)` reads the records (parquet/, or
the per-domain JSON without pyarrow) and `load_dataset(<folder>, "trl")` the
TRL rows (trl/), one split per domain; its text says how to train with TRL
(vision DPO, text-only DPO, reward modelling).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from curation.benchmarks.mmrb2 import card as mmrb2_card


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


def configs_yaml(configs: Sequence[tuple[str, str]], domains: Sequence[str]) -> list[str]:
    """YAML front matter `configs:` for the Hugging Face `datasets` library,
    the same shape for releases and training mixes: each (name, path pattern
    with {} for the domain) config has the split "train" (every domain) and
    one split per domain."""
    splits = split_names(domains)
    lines = ["---", "configs:"]
    for name, pattern in configs:
        lines += [f"- config_name: {name}", "  data_files:"]
        lines += [f"  - split: {ALL_SPLIT}", "    path:"]
        lines += [f"    - {pattern.format(slug)}" for slug in domains]
        for slug in domains:
            lines += [f"  - split: {splits[slug]}", f"    path: {pattern.format(slug)}"]
    return [*lines, "---", ""]


def splits_line(domains: Sequence[str]) -> str:
    """The card's sentence naming the splits of every config."""
    names = ", ".join(f"`{name}`" for name in split_names(domains).values())
    return (
        f'Splits (every config): `{ALL_SPLIT}` (every domain together, `split="{ALL_SPLIT}"`) '
        f"and one per domain: {names}."
    )


def card_configs(domains: Sequence[str], *, parquet: bool, trl: bool) -> list[str]:
    """The card's YAML front matter, so load_dataset(<release folder>) reads
    the records (without it, it would take the folder for an image folder
    labelled by domain). The default config is the benchmark records:
    parquet/ (the per-domain JSON where there is no parquet); `trl` is trl/,
    named only where the release has it."""
    default = "parquet/{}.parquet" if parquet else "{}.json"
    configs = [("default", default)] + ([("trl", "trl/{}.parquet")] if trl else [])
    return configs_yaml(configs, domains)


def dataset_card(meta: Any, summary: dict, *, parquet: bool = False, trl: bool = False) -> str:
    """README.md generated from the data, in the terms of each format the
    release holds: the Multimodal RewardBench records when it has any, the
    MMRB2 task files when it has any (curation.benchmarks.mmrb2.card)."""
    titles = {slug: title for slug, title, _ in meta.domains}
    categories = {slug: category for slug, _, category in meta.domains}
    with_records = [slug for slug, n in summary["counts"].items() if n]
    mmrb2 = meta.manifest_extra.get("mmrb2")
    mrb = bool(summary["total"]) or not mmrb2
    lines = card_configs(with_records, parquet=parquet, trl=trl) if with_records else []
    lines += [f"# {meta.project_name} — release {meta.version}", ""]
    if mrb and mmrb2:
        total, pairs = summary["total"], mmrb2["pairs"]
        lines += [
            "Expert-annotated preference data for multimodal reward models and judges, in "
            f"two formats: {total} record{'' if total == 1 else 's'} in the Multimodal "
            "RewardBench format (`ID, Text, Image, Output1, Output2, Better, Category`) and "
            f"{pairs} pair{'' if pairs == 1 else 's'} in Multimodal RewardBench 2 task files.",
            "",
        ]
    elif mrb:
        lines += [
            "A benchmark of expert-annotated (prompt, chosen, rejected) triplets for "
            "vision-language reward models, in the Multimodal RewardBench format "
            "(`ID, Text, Image, Output1, Output2, Better, Category`).",
            "",
        ]
    else:
        lines += [
            "Expert-annotated preference pairs for multimodal reward models and judges, in "
            "the Multimodal RewardBench 2 layout (facebookresearch/MMRB2): per task a "
            '`{"pairs": [...]}` file of prompts and two responses (text, images or both), '
            "`chosen` and `human_annotations`.",
            "",
        ]
    if meta.notes:
        lines += [meta.notes, ""]
    # One section per format the release holds.
    if mrb:
        lines += _mrb_lines(meta, summary, titles, categories, mixed=bool(mmrb2))
    if mmrb2:
        if lines[-1] == "":
            lines.pop()  # the section opens with its own blank line
        lines += mmrb2_card.card_lines(mmrb2, titles=titles, mixed=mrb)
    ann = meta.annotation
    lines += ["", "## How it was annotated", "", *_annotation_lines(ann, mmrb2=bool(mmrb2))]
    lines += ["", "## Agreement"]
    graded = mmrb2_card.graded_agreement_lines(
        [(slug, titles.get(slug, slug)) for slug, _, _ in meta.domains], meta.agreement
    )
    if mrb or not graded:  # else the graded table has the binary collapse
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
        *_files_lines(mrb=mrb, mmrb2=bool(mmrb2), parquet=parquet, trl=trl),
        "",
    ]
    if mrb:
        lines += _loading_lines(with_records, parquet=parquet, trl=trl)
    else:
        lines += _mmrb2_loading_lines(mmrb2)
    return "\n".join(lines)


def _provenance_counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in counts.items()) or "no members"


def _mrb_lines(meta, summary, titles, categories, *, mixed: bool) -> list[str]:
    """The Multimodal RewardBench records: counts per domain and sub-bucket.
    In a release that also holds MMRB2 task files, only the domains that
    have records or are not MMRB2 tasks are listed."""
    counts = summary["counts"]
    shown = [
        slug
        for slug in counts
        if not mixed or counts[slug] or not categories.get(slug, "").startswith("mmrb2/")
    ]
    lines = [
        "## Multimodal RewardBench records" if mixed else "## Contents",
        "",
        f"{summary['total']} record{'' if summary['total'] == 1 else 's'}. Which slot holds "
        f"the chosen response is a seeded shuffle per domain (seed {meta.seed}), balanced "
        "within each domain.",
        "",
        "| domain | Category | records | Output1 better | Output2 better |",
        "|---|---|---:|---:|---:|",
    ]
    for slug in shown:
        b = summary["balance"][slug]
        lines.append(
            f"| {titles.get(slug, slug)} | `{categories.get(slug, slug)}` | {counts[slug]} | "
            f"{b['Output1']} | {b['Output2']} |"
        )
    if summary["sub_buckets"]:
        lines += ["", "Sub-buckets used by the official scorer (by ID prefix):", ""]
        lines += [f"- `{bucket}`: {n}" for bucket, n in summary["sub_buckets"].items()]
    return lines


def _annotation_lines(ann: dict, *, mmrb2: bool) -> list[str]:
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
    rule = _rule_line(ann, mmrb2=mmrb2)
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
    return [*lines, decisions, *_label_quality_lines(ann.get("label_quality_filter"))]


def _rule_line(ann: dict, *, mmrb2: bool) -> str:
    """The consensus rule, for graded projects that set one and for releases
    of MMRB2 task files (whose benchmark states its own)."""
    least = ann.get("consensus_strength")
    if least is not None:
        return (
            f"- Consensus rule: an item is agreed only when every vote is on one side and "
            f"their mean strength is at least {least:g} (1 slightly, 2 better, 3 much "
            "better); any other item went to a curator, never to more votes."
        )
    if not mmrb2 or "agree_share" not in ann:
        return ""
    return (
        f"- Consensus rule: an item is agreed when at least {100 * ann['agree_share']:g}% of "
        "its votes pick one side (or only ties dissent); other items went to a curator"
        + (" after escalation." if ann.get("escalated") else ".")
    )


def _files_lines(*, mrb: bool, mmrb2: bool, parquet: bool, trl: bool) -> list[str]:
    mrb_files = (
        "`all_data.json` (all records), `<domain>.json` (per domain), `images/`, "
        "`dpo/<domain>.jsonl` (prompt/chosen/rejected as chat messages, image paths), "
        + ("`parquet/<domain>.parquet` (the records, images embedded), " if parquet else "")
        + ("`trl/<domain>.parquet` (conversational rows for TRL, images embedded), " if trl else "")
    )
    task_files = "`mmrb2/<task>.json` (the task files, their images under `mmrb2/`), "
    tail = "`provenance.jsonl`, `manifest.json` (counts and the sha256 of every file)."
    if not mmrb2:
        return [mrb_files + tail]
    if mrb:
        return [mrb_files + task_files + tail]
    return [
        task_files + tail,
        "",
        "No pair has the Multimodal RewardBench shape (one prompt image, text responses), so "
        "that format's files (`all_data.json`, `<domain>.json`, `dpo/`) are present but empty.",
    ]


def _mmrb2_loading_lines(mmrb2: dict) -> list[str]:
    task = next(iter(mmrb2["tasks"]), "<task>")
    return [
        "## Loading",
        "",
        "```python",
        "import json",
        f'pairs = json.load(open("path/to/this/folder/mmrb2/{task}.json"))["pairs"]',
        "```",
        "",
        "Image paths in a pair are relative to the task file's folder. MMRB2's own "
        "`compute_accuracy.py` scores judges against these files (forward and reverse order).",
        "",
    ]


def _loading_lines(domains: Sequence[str], *, parquet: bool, trl: bool) -> list[str]:
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
