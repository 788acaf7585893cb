"""The files of a training mix (no Django import). A mix folder holds::

    dpo/<domain>.jsonl      TRL rows; `images` are paths relative to the JSONL
                            file's own folder (``../images/ab/<sha256>.png``)
    trl/<domain>.parquet    the same rows, images embedded ({bytes, path}), for
                            Hugging Face `datasets` (where pyarrow is installed)
    images/<aa>/<sha256>.<ext>
                            every image once, named by its content
    dropped.jsonl           every candidate left out: source, id, reason
                            (status, provenance, min_share, domain, duplicate
                            with `duplicate_of`, over_limit)
    README.md               dataset card: sources, filters, counts, dedup statistics
    manifest.json           all of the above and the sha256 of every file

The zip, its checksum and the file checksums come from curation.releases.exporter.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from curation.releases import card, exporter, trl
from curation.releases.mixes.rows import Candidate, Selection, trl_row

SCHEMA_VERSION = "1.0"
NORMALISATION = "Unicode NFKC, then casefold, then white space collapsed to one space and trimmed"


def image_name(c: Candidate) -> str:
    return f"images/{c.image_sha256[:2]}/{c.image_sha256}.{c.image_ext}"


def ordered_rows(selection: Selection) -> list[tuple[int, Candidate]]:
    """Kept rows grouped by domain (sorted), then by source, then by ID."""
    return sorted(selection.kept, key=lambda r: (r[1].domain, r[0], r[1].external_id))


def write_mix(
    folder: Path,
    selection: Selection,
    *,
    labels: list[str],
    meta: dict[str, Any],
    copy_image: Callable[[Any, Path], None],  # (a Candidate, its destination)
    parquet: bool,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Write every file of the mix into `folder` (empty); returns the manifest.
    `meta` carries name, version, seed, created_at, notes, sources, filters,
    dedup, mode, size (written to the card and the manifest as they are)."""
    jsonl: dict[str, exporter.JsonLinesWriter] = {}
    writer = trl.TrlWriter(folder, extra=("source",)) if parquet else None
    counts: Counter[str] = Counter()
    by_source: dict[str, Counter[str]] = {label: Counter() for label in labels}
    try:
        for index, c in ordered_rows(selection):
            label = labels[index]
            # A text-only prompt (a ranked item's pairs may have none) has no image.
            image = image_name(c) if c.image_sha256 else ""
            destination = folder / image
            if image and not destination.exists():
                destination.parent.mkdir(parents=True, exist_ok=True)
                copy_image(c, destination)
            row_id = f"{label}:{c.external_id}"
            if c.domain not in jsonl:
                jsonl[c.domain] = exporter.JsonLinesWriter(folder / "dpo" / f"{c.domain}.jsonl")
            paths = [f"../{image}"] if image else []
            jsonl[c.domain].write(trl_row(row_id=row_id, source=label, candidate=c, images=paths))
            if writer is not None:
                embedded = (
                    [{"bytes": destination.read_bytes(), "path": image.rsplit("/", 1)[1]}]
                    if image
                    else []
                )
                writer.write_row(
                    c.domain, trl_row(row_id=row_id, source=label, candidate=c, images=embedded)
                )
            counts[c.domain] += 1
            by_source[label][c.domain] += 1
            if progress is not None:
                progress(1)
    finally:
        for w in jsonl.values():
            w.close()
        if writer is not None:
            writer.close()
    dropped = exporter.JsonLinesWriter(folder / "dropped.jsonl")
    for entry in selection.dropped:
        dropped.write(entry)
    dropped.close()
    summary = {
        "counts": dict(sorted(counts.items())),
        "counts_by_source": {label: dict(sorted(c.items())) for label, c in by_source.items()},
        "report": selection.report,
        "total": sum(counts.values()),
    }
    card = mix_card(meta, summary, parquet=writer is not None)
    (folder / "README.md").write_text(card, encoding="utf-8")
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "format": "trl-preference-mix",
        **meta,
        "dedup_key": f"image sha256 + prompt normalised by {NORMALISATION}",
        **summary,
        "files": exporter.file_checksums(folder),
    }
    with (folder / "manifest.json").open("w", encoding="utf-8") as fh:
        json.dump(manifest, fh, ensure_ascii=False, indent=2)
        fh.write("\n")
    return manifest


def _yaml_configs(domains: Iterable[str], parquet: bool) -> list[str]:
    """The same `configs:` as a release's (curation.releases.card): a mix has
    no benchmark records, so its `default` config and its `trl` config are
    both the TRL rows; each has the split "train" and one per domain."""
    if not parquet:
        return []
    return card.configs_yaml(
        [("default", "trl/{}.parquet"), ("trl", "trl/{}.parquet")], list(domains)
    )


def mix_card(meta: dict[str, Any], summary: dict[str, Any], *, parquet: bool) -> str:
    """README.md of a mix, generated from the data."""
    f = meta["filters"]
    lines = [
        *_yaml_configs(summary["counts"], parquet),
        f"# Training mix {meta['name']} — {meta['version']}",
        "",
        "Human-preference pairs (prompt, image, chosen, rejected) for training reward "
        "models, mixed from the sources below, in the layout TRL's `DPOTrainer` and "
        "`RewardTrainer` take.",
        "",
    ]
    if meta.get("notes"):
        lines += [meta["notes"], ""]
    lines += [
        "## Sources",
        "",
        "| source | kind | limit | weight | candidates | "
        "filtered out | duplicates | over limit | kept |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for spec, rep in zip(meta["sources"], summary["report"], strict=True):
        lines.append(
            f"| `{rep['source']}` | {spec['kind']} | {_dash(rep['limit'])} | "
            f"{_dash(spec.get('weight'))} | {rep['candidates']} | "
            f"{sum(rep['filtered'].values())} | {rep['duplicates']} | {rep['over_limit']} | "
            f"{rep['kept']} |"
        )
    lines += [
        "",
        "## Filters",
        "",
        f"- Verdict status: {', '.join(f['statuses'])}",
        f"- Provenance: {', '.join(f['provenances'])}",
        f"- Minimum agreement share: {_dash(f.get('min_share'))} (votes for the chosen "
        "response over all current votes; an item without votes has no share and is left "
        "out when a minimum is set)",
        f"- Domains: {', '.join(f['domains']) if f.get('domains') else 'all'}",
        f"- Limits: {meta['mode']}"
        + (f", total {meta['size']}" if meta.get("size") else "")
        + f"; seeded selection (seed {meta['seed']})",
        "",
        "## Deduplication",
        "",
    ]
    if meta["dedup"]:
        lines += [
            "Two pairs are duplicates when their images have the same SHA-256 and their "
            f"prompts are equal after normalisation ({NORMALISATION}). Earlier sources win; "
            "within a source the first in seeded order wins.",
            "",
        ]
        for rep in summary["report"]:
            of = ", ".join(f"{n} of `{k}`" for k, n in rep["duplicate_of"].items()) or "none"
            filtered = ", ".join(f"{k}: {n}" for k, n in rep["filtered"].items()) or "none"
            lines.append(
                f"- `{rep['source']}`: duplicates dropped {rep['duplicates']} ({of}); "
                f"filtered out: {filtered}"
            )
        lines += ["", "Every row left out is listed with its reason in `dropped.jsonl`.", ""]
    else:
        lines += ["Off: pairs present in several sources appear once per source.", ""]
    lines += ["## Counts", "", "| domain | records |", "|---|---:|"]
    lines += [f"| {slug} | {n} |" for slug, n in summary["counts"].items()]
    lines += [f"| **all** | {summary['total']} |", "", "## Use", ""]
    if parquet:
        lines += [
            "The front matter's `configs:` make the Hugging Face `datasets` library read this "
            "folder as it is, from any working directory (give the folder's path), as a "
            "release's: the `trl` config (here also the `default` one: a mix has no "
            "benchmark records) is the TRL preference rows of `trl/`. "
            + card.splits_line(list(summary["counts"])),
            "",
            "```python",
            "from datasets import load_dataset",
            'mix = load_dataset("path/to/this/folder", "trl", split="train")',
            "# vision DPO: DPOTrainer(..., args=DPOConfig(max_length=None), train_dataset=mix)",
            '# text-only DPO or RewardTrainer: mix.remove_columns("images")',
            "```",
            "",
        ]
    else:
        lines += [
            "This mix was built where pyarrow was not installed: it has no `trl/` copy and no "
            "`configs:` for `datasets`. Build it again with pyarrow installed (a runtime "
            "dependency of the studio) for them.",
            "",
        ]
    lines += [
        "`dpo/<domain>.jsonl` holds the same rows; each `images` entry is a path relative "
        "to the JSONL file's own folder (`../images/…`), so the folder can be moved or "
        "unpacked anywhere. Row IDs are `<source>:<original ID>`.",
        "",
        "`manifest.json` lists the sha256 of every file.",
        "",
    ]
    return "\n".join(lines)


def _dash(value: Any) -> str:
    return "—" if value is None else str(value)
