"""Domain presets offered when a project is created. Each entry: slug, title,
export Category string (written verbatim into releases), kind."""

from __future__ import annotations

from ..models import MULTIMODAL_REWARDBENCH_DOMAINS, DomainKind

# VL-RewardBench (Li et al., arXiv 2411.17451): 1,250 pairs in three task
# groups, reported per group by its authors: general multimodal instructions
# (WildVision, VLFeedback: open preference), hallucination-oriented queries
# (POVID, RLAIF-V, RLHF-V: is the description true of the image?) and
# multimodal reasoning (MMMU-Pro, MathVerse: is the answer right?).
VL_REWARDBENCH_DOMAINS: tuple[tuple[str, str, str, str], ...] = (
    ("general", "General", "general", DomainKind.PREFERENCE),
    ("hallucination", "Hallucination", "hallucination", DomainKind.CORRECTNESS),
    ("reasoning", "Reasoning", "reasoning", DomainKind.CORRECTNESS),
)

PRESETS: dict[str, tuple[str, tuple[tuple[str, str, str, str], ...]]] = {
    "mrb": ("Multimodal RewardBench (six domains)", MULTIMODAL_REWARDBENCH_DOMAINS),
    "vlrb": ("VL-RewardBench (general, hallucination, reasoning)", VL_REWARDBENCH_DOMAINS),
    "empty": ("Empty (add domains yourself)", ()),
}

PRESET_CHOICES = [(key, label) for key, (label, _) in PRESETS.items()]
