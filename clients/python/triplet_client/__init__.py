"""Python client for Triplet Studio's REST API.

from triplet_client import Client
studio = Client("http://127.0.0.1:8000", token="…")
"""

from triplet_client.client import Client
from triplet_client.errors import (
    ApiError,
    BadRequest,
    ChecksumMismatch,
    Conflict,
    ImportFailed,
    ImportProblem,
    MissingExtra,
    NotAuthenticated,
    NotFound,
    PayloadTooLarge,
    PermissionDenied,
    ReleaseFailed,
    ServerError,
    StudioError,
    WaitTimeout,
)
from triplet_client.exports import Export
from triplet_client.models import (
    Assignment,
    Claim,
    Domain,
    Evaluation,
    Group,
    ImportResult,
    Invitation,
    ItemRow,
    Judged,
    Member,
    Membership,
    Progress,
    Project,
    Release,
    Verdict,
    Votes,
)

__version__ = "0.1.0"

__all__ = [
    "ApiError",
    "Assignment",
    "BadRequest",
    "ChecksumMismatch",
    "Claim",
    "Client",
    "Conflict",
    "Domain",
    "Evaluation",
    "Export",
    "Group",
    "ImportFailed",
    "ImportProblem",
    "ImportResult",
    "Invitation",
    "ItemRow",
    "Judged",
    "Member",
    "Membership",
    "MissingExtra",
    "NotAuthenticated",
    "NotFound",
    "PayloadTooLarge",
    "PermissionDenied",
    "Progress",
    "Project",
    "Release",
    "ReleaseFailed",
    "ServerError",
    "StudioError",
    "Verdict",
    "Votes",
    "WaitTimeout",
]
