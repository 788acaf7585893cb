"""Who may send a view a body, decided before a byte of it is read (issue 29).

Django and DRF read a request's body lazily, but early: CsrfViewMiddleware
parses a POST's form (spooling a multipart upload's files to disk) before
any view runs, and DRF's session authentication does the same before a
view's own checks. So a view that checks membership first still let any
signed-in account make the server read (and spool) a large body.

A view that takes a body therefore declares its check:

    @guard_body(member_of(ADMIN_ROLES), uploads=True)

`check(user, **url_kwargs)` decides from the URL alone (a project's slug,
an assignment's id), raising Http404 for a stranger (the object does not
exist for them) or PermissionDenied for a member without the role.
config.request_limits.BodyGuardMiddleware runs it, for a signed-in user,
before CSRF, DRF's parsers or the view touch request.POST/FILES/data; the
view still checks as ever. `uploads=True` lets a view take bodies up to
UPLOAD_MAX_BYTES, any other guarded view takes at most
DATA_UPLOAD_MAX_MEMORY_SIZE, and a view that declares no check at most
UNCHECKED_BODY_MAX_BYTES: a body that nobody checked stays small. A body
within that bound goes to any view without its check (checking first would
spare nothing; the view's own check answers the same), so the check costs
nothing on the small posts a team sends all day (a vote).

For a DRF view, decorate the APIView class; for a function view, put the
decorator outermost (the ones below it keep the attributes anyway).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

BodyCheck = Callable[..., None]


def guard_body(check: BodyCheck, *, uploads: bool = False) -> Callable[[Any], Any]:
    def mark(view: Any) -> Any:
        view.body_check = staticmethod(check) if isinstance(view, type) else check
        view.takes_uploads = uploads
        return view

    return mark


def guard_of(view_func: Any) -> tuple[BodyCheck | None, bool]:
    """The check a resolved view declared (None: none) and whether it takes uploads."""
    target = getattr(view_func, "view_class", view_func)  # an APIView's as_view()
    return getattr(target, "body_check", None), bool(getattr(target, "takes_uploads", False))


def signed_in(user, **_kwargs) -> None:
    """The check of a view any signed-in user may post to (their own account's
    forms): nothing to decide from the URL, but the view's body is bounded by
    DATA_UPLOAD_MAX_MEMORY_SIZE rather than UNCHECKED_BODY_MAX_BYTES."""
