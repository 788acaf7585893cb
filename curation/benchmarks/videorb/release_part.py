"""A release's VideoRewardBench-style part: its file and videos written by
.release_files, the manifest's `videorb` section (.card) and the provenance
of its members (curation.benchmarks.common.release; ReleaseItem `better`
"A": the line's chosen comes first, as in MM-RLHF-RewardBench's lines)."""

from __future__ import annotations

from curation.benchmarks.base import BuildContext, Part
from curation.benchmarks.common.release import prefix_part
from curation.benchmarks.videorb import card, release_files


def prepare(ctx: BuildContext) -> Part:
    return prefix_part(
        ctx,
        key="videorb",
        folder=card.FOLDER,
        write_file=release_files.write_file,
        manifest_section=card.manifest_section,
        own=lambda w: {"file": card.FILE, "dimension": w.dimension, "video": w.video},
    )
