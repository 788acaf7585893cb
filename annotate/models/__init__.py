"""The annotate app's models, one module per part of the product; Django and
every caller import them from here.

Canonical order: `response_1`/`response_2` are stored in import order and every
judgement stores its answer in those canonical slot terms (per-slot answers in
JudgementSlot rows). What the annotator saw, in which order, is a display
detail kept on the Assignment (`display_order`, a permutation of the slots).
"""

from annotate.models.checks import ProjectPause
from annotate.models.items import (
    VOTE_TALLIES,
    GoldChoice,
    ImageAsset,
    Item,
    ItemPurpose,
    MediaAsset,
    MediaKind,
    item_votes,
    shuffle_key,
)
from annotate.models.parts import (
    ItemPart,
    PartKind,
    Slot,
    derive_item_text,
    image_part,
    media_part,
    parts_by_item,
    parts_by_slot,
    response_slot,
    shown_parts,
    text_part,
    write_item_content,
)
from annotate.models.progress import ProgressCounter
from annotate.models.projects import (
    DOMAIN_WORDING,
    MULTIMODAL_REWARDBENCH_DOMAINS,
    Domain,
    DomainKind,
    Membership,
    PreferenceScale,
    Project,
    Role,
    Task,
)
from annotate.models.qualification import QualificationAnswer, QualificationAttempt
from annotate.models.votes import (
    Assignment,
    AssignmentStatus,
    Choice,
    Correctness,
    Grade,
    Judgement,
    JudgementSlot,
    submitted_count,
)

# Invitations and the setup audit trail live in annotate.setup.
from annotate.setup.models import Invitation, SetupEvent

__all__ = [
    "DOMAIN_WORDING",
    "MULTIMODAL_REWARDBENCH_DOMAINS",
    "VOTE_TALLIES",
    "Assignment",
    "AssignmentStatus",
    "Choice",
    "Correctness",
    "Domain",
    "DomainKind",
    "GoldChoice",
    "Grade",
    "ImageAsset",
    "Invitation",
    "Item",
    "ItemPart",
    "ItemPurpose",
    "Judgement",
    "JudgementSlot",
    "MediaAsset",
    "MediaKind",
    "Membership",
    "PartKind",
    "PreferenceScale",
    "ProgressCounter",
    "Project",
    "ProjectPause",
    "QualificationAnswer",
    "QualificationAttempt",
    "Role",
    "SetupEvent",
    "Slot",
    "Task",
    "derive_item_text",
    "image_part",
    "item_votes",
    "media_part",
    "parts_by_item",
    "parts_by_slot",
    "response_slot",
    "shown_parts",
    "shuffle_key",
    "submitted_count",
    "text_part",
    "write_item_content",
]
