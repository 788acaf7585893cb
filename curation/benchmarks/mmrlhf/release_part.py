"""A release's MM-RLHF-RewardBench part: its file written by .release_files,
the manifest's `mmrlhf` section (.card) and the provenance of members only
in this file (curation.benchmarks.common.release; ReleaseItem `better` "A":
the line's chosen comes first, as RewardBench 2's)."""

from __future__ import annotations

from curation.benchmarks.base import BuildContext, Part
from curation.benchmarks.common.release import prefix_part
from curation.benchmarks.mmrlhf import card, release_files


def prepare(ctx: BuildContext) -> Part:
    return prefix_part(
        ctx,
        key="mmrlhf",
        folder=card.FOLDER,
        write_file=release_files.write_file,
        manifest_section=card.manifest_section,
        own=lambda w: {"file": card.FILE, "category": w.category},
    )
