"""A release's Multimodal RewardBench records (DESIGN §7): which included
items are records (those of its shape: one prompt image, text responses),
their released IDs per domain (re-keyed so the official scorer still puts
each in its sub-bucket: record_prefix) and the IDs the
official scorer would put in a sub-bucket their name does not suggest.

The records themselves, the images, dpo/, the parquet and TRL copies and
provenance.jsonl are the release's shared pair layout, written by
curation.releases.exporter from the rows chosen here in the record shape of
.records (Part.records)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from curation.benchmarks import registry
from curation.benchmarks.base import BuildContext, Part, Records
from curation.benchmarks.mrb import records
from curation.benchmarks.mrb.records import FORMAT_NAME, sub_bucket
from curation.releases.rekey import rekeyed_id

_UNSAFE = re.compile(r"[^a-z0-9]+")


def record_prefix(category: str, external_id: str) -> str:
    """The prefix of a record's new ID: one that puts it in the same
    official sub-bucket as its old ID (the scorer reads the ID's prefix:
    `math…` in reasoning, `pairs…` in safety); else the one another
    benchmark's files give the item's re-keyed ID (a category of its own:
    registry.id_prefix), so an item in both files has one new ID; else the
    category's last segment."""
    bucket = sub_bucket(category, external_id)
    if bucket == "reasoning/math":
        return "math"
    if bucket == "safety/bias":
        return "pairs"
    prefix = registry.id_prefix(category)
    if prefix is not None:
        return prefix
    return _UNSAFE.sub("-", category.rsplit("/", 1)[-1].lower()).strip("-") or "item"


def prepare(ctx: BuildContext) -> Part:
    # The items of the MRB shape have Item.image (one prompt image); such
    # items of another benchmark are records too (and in its own files).
    verdicts = ctx.included.filter(item__image__isnull=False)
    ids_by_domain: dict[str, list[str]] = {d.slug: [] for d in ctx.domains}
    old_by_domain: dict[str, list[str]] = {d.slug: [] for d in ctx.domains}
    released: dict[str, str] = {}
    rows = verdicts.values_list(
        "item__domain__slug", "item__domain__export_category", "item__external_id"
    )
    for slug, category, ext_id in rows:
        new_id = (
            rekeyed_id(ctx.salt, record_prefix(category, ext_id), ext_id) if ctx.salt else ext_id
        )
        released[ext_id] = new_id
        ids_by_domain[slug].append(new_id)
        old_by_domain[slug].append(ext_id)
    return Part(
        key="mrb",
        format_name=FORMAT_NAME,
        released=released,
        written=verdicts,
        records=Records(
            verdicts=verdicts,
            ids_by_domain=ids_by_domain,
            old_by_domain=old_by_domain,
            shape=records,
        ),
        warnings=wrong_bucket_warnings(
            (d.export_category, i) for d in ctx.domains for i in ids_by_domain[d.slug]
        ),
    )


def wrong_bucket_warnings(pairs: Iterable[tuple[str, str]]) -> list[str]:
    """IDs that the official scorer would put in a sub-bucket their name
    suggests they do not belong to (e.g. `geo_math_3` counted as coding)."""
    warnings = []
    for category, ext_id in pairs:
        lowered = ext_id.lower()
        if category == "reasoning" and "math" in lowered and not lowered.startswith("math"):
            warnings.append(
                f"{ext_id}: contains 'math' but not as a prefix, so the official scorer "
                "counts it as reasoning/coding"
            )
        if category == "safety" and "pairs" in lowered and not lowered.startswith("pairs"):
            warnings.append(
                f"{ext_id}: contains 'pairs' but not as a prefix, so the official scorer "
                "counts it as safety/toxicity"
            )
    return warnings
