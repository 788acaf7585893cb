"""Who may act on another person's account: the account rule, written once.

An account belongs to its owner. Only a **site admin** may set or reset
another person's password, or make a set-password link for them:

- a superuser, for any account;
- an active staff user holding Django's ``auth.change_user`` permission,
  only for accounts that are neither staff nor superusers (so staff cannot
  take over each other, or a superuser, and climb from there).

Project roles grant nothing here: a project admin who adds an existing
account as a member gets no power over that account (issue 29: adding a
victim to one's own project and pressing "Password link" was a takeover of
the victim's other projects). API tokens are made and revoked by their owner
only (``/account/token/``); a password change revokes them
(annotate.receivers). The Django admin asks the same rule (annotate.admin).
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied


def is_site_admin(user) -> bool:
    """A superuser, or active staff who may change users."""
    if not (user.is_authenticated and user.is_active):
        return False
    return user.is_superuser or (user.is_staff and user.has_perm("auth.change_user"))


def may_manage_account(actor, account) -> bool:
    """Whether `actor` may set `account`'s password or make its set-password
    link (or change it in the Django admin)."""
    if not is_site_admin(actor):
        return False
    if actor.is_superuser:
        return True
    return not (account.is_staff or account.is_superuser)


class AccountRefused(PermissionDenied):
    """The actor may not act on that account (a 403 in views)."""


def check_may_manage_account(actor, account) -> None:
    if may_manage_account(actor, account):
        return
    if not is_site_admin(actor):
        raise AccountRefused("Only site admins can set another person's password.")
    raise AccountRefused("Only a superuser can set a staff member's or a superuser's password.")
