"""The curation app's models, one module per sub-domain, all importable from
here: Django loads the app's models through this package, and every
importer, the admin and the migrations name them as curation.models.<Name>."""

# isort: off
# Imported in the order the models are declared across the modules, the
# order Django registers them in (as when they were one module).
from curation.models.verdicts import (
    RELEASABLE,
    RELEASABLE_ANY_SLOT,
    AuditEvent,
    ContestKind,
    ExclusionCategory,
    FinalChoice,
    Provenance,
    Verdict,
    VerdictRank,
    VerdictStatus,
)
from curation.models.agreement import AgreementCache
from curation.models.releases import (
    PairwiseMode,
    Release,
    ReleaseItem,
    ReleaseStatus,
)
from curation.models.evaluation import (
    Evaluation,
    JudgeEndpoint,
    JudgeOrder,
    JudgeOutput,
    JudgeRun,
    JudgeRunQuerySet,
    JudgeRunStatus,
    VideoAs,
)
from curation.models.mixes import Mix, MixQuerySet, MixSource
from curation.models.quality import (
    ItemPrediction,
    ItemQuality,
    LabelQualityRun,
    LabelQualityStatus,
    Side,
)
from curation.models.calibration import CalibrationCache, JudgeVote
# isort: on

__all__ = [
    "RELEASABLE",
    "RELEASABLE_ANY_SLOT",
    "AgreementCache",
    "AuditEvent",
    "CalibrationCache",
    "ContestKind",
    "Evaluation",
    "ExclusionCategory",
    "FinalChoice",
    "ItemPrediction",
    "ItemQuality",
    "JudgeEndpoint",
    "JudgeOrder",
    "JudgeOutput",
    "JudgeRun",
    "JudgeRunQuerySet",
    "JudgeRunStatus",
    "JudgeVote",
    "LabelQualityRun",
    "LabelQualityStatus",
    "Mix",
    "MixQuerySet",
    "MixSource",
    "PairwiseMode",
    "Provenance",
    "Release",
    "ReleaseItem",
    "ReleaseStatus",
    "Side",
    "Verdict",
    "VerdictRank",
    "VerdictStatus",
    "VideoAs",
]
