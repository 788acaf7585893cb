"""A curator's decision on an item through the API, as the verdicts'
decision endpoint and the label-quality audit's take it: the keywords every
decision service gets, and its refusals as HTTP errors."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rest_framework import exceptions

from common.api.errors import Conflict, Rejected
from curation.models import Verdict
from curation.verdicts.decisions import ConflictOfInterest, CurationError, StaleDecision


def decision_keywords(request, project, item_id: int, data: dict) -> dict:
    """Who decides what on which item, at which version of its verdict, and
    why (`reason`, blank where the decision needs none)."""
    return {
        "project": project,
        "item_id": item_id,
        "curator": request.user,
        "reason": data.get("reason", ""),
        "version": data["version"],
    }


@contextmanager
def decision_errors() -> Iterator[None]:
    """A refused decision as the API says it: 404 for an item without a
    verdict, 409 `stale` for an old version, 403 `conflict_of_interest` for a
    curator who voted on the item, 400 `refused` for the rest."""
    try:
        yield
    except Verdict.DoesNotExist:
        raise exceptions.NotFound("No such item.") from None
    except StaleDecision as exc:
        raise Conflict(str(exc), code="stale") from None
    except ConflictOfInterest as exc:
        raise exceptions.PermissionDenied(str(exc), code="conflict_of_interest") from None
    except CurationError as exc:
        raise Rejected(str(exc), code="refused") from None
