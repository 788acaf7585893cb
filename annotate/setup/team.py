"""A project's people: adding, changing, deactivating and removing members,
and invitation links. Every change is audited (SetupEvent).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F
from django.urls import reverse
from django.utils import timezone

from annotate.loop.leases import return_leases
from annotate.models import (
    Judgement,
    Membership,
    Project,
    Role,
)
from annotate.setup.models import Invitation, token_digest
from annotate.setup.service import SetupError, _audit, _check_writable, _pseudonym

# --- Members -----------------------------------------------------------------------------


def add_member(*, actor, project: Project, user, role: str) -> Membership:
    """Add `user` with `role`; a deactivated member is reactivated with it."""
    if role not in Role.values:
        raise SetupError(f"role is one of {', '.join(Role.values)}", field="role")
    if not user.is_active:
        raise SetupError(f"{user.get_username()}'s account is disabled.", field="user")
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=project.pk)
        _check_writable(project)
        membership = Membership.objects.filter(project=project, user=user).first()
        if membership is not None and membership.is_active:
            raise SetupError(
                f"{user.get_username()} is a member already ({membership.role}).", field="user"
            )
        if membership is not None:
            before = {"role": membership.role, "is_active": False}
            membership.role, membership.is_active = role, True
            membership.save(update_fields=["role", "is_active"])
            action = "reactivated"
        else:
            before = {}
            membership = Membership.objects.create(
                project=project, user=user, role=role, pseudonym=_pseudonym(project)
            )
            action = "added"
        _audit(
            actor=actor,
            action=f"member_{action}",
            project=project,
            subject=user,
            before=before,
            after={"role": role, "is_active": True},
        )
    return membership


def _membership_for_update(project: Project, user) -> Membership:
    membership = Membership.objects.select_for_update().filter(project=project, user=user).first()
    if membership is None:
        raise SetupError(f"{user.get_username()} is not a member of {project.name}.")
    return membership


def _check_not_last_admin(project: Project, membership: Membership) -> None:
    if membership.role != Role.ADMIN or not membership.is_active:
        return
    admins = Membership.objects.filter(project=project, role=Role.ADMIN, is_active=True)
    if not admins.exclude(pk=membership.pk).exists():
        raise SetupError("The project's last admin cannot leave it or lose the admin role.")


def change_member_role(*, actor, project: Project, user, role: str) -> Membership:
    if role not in Role.values:
        raise SetupError(f"role is one of {', '.join(Role.values)}", field="role")
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=project.pk)
        _check_writable(project)
        membership = _membership_for_update(project, user)
        if membership.role == role:
            return membership
        if role != Role.ADMIN:
            _check_not_last_admin(project, membership)
        before = membership.role
        membership.role = role
        membership.save(update_fields=["role"])
        _audit(
            actor=actor,
            action="member_role_changed",
            project=project,
            subject=user,
            before={"role": before},
            after={"role": role},
        )
    return membership


def deactivate_member(*, actor, project: Project, user) -> list[int]:
    """The member loses access at once; their open leases return to the pool
    (returns those items); their votes stay and keep counting."""
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=project.pk)
        membership = _membership_for_update(project, user)
        if not membership.is_active:
            raise SetupError(f"{user.get_username()} is deactivated already.")
        _check_not_last_admin(project, membership)
        membership.is_active = False
        membership.save(update_fields=["is_active"])
        released = return_leases(project_id=project.pk, user_id=user.pk)
        _audit(
            actor=actor,
            action="member_deactivated",
            project=project,
            subject=user,
            before={"role": membership.role, "is_active": True},
            after={"is_active": False, "released_leases": len(released)},
        )
    return released


def reactivate_member(*, actor, project: Project, user) -> Membership:
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=project.pk)
        _check_writable(project)
        membership = _membership_for_update(project, user)
        if membership.is_active:
            raise SetupError(f"{user.get_username()} is active already.")
        membership.is_active = True
        membership.save(update_fields=["is_active"])
        _audit(
            actor=actor,
            action="member_reactivated",
            project=project,
            subject=user,
            before={"is_active": False},
            after={"is_active": True},
        )
    return membership


def remove_member(*, actor, project: Project, user) -> list[int]:
    """Take the membership away (only for someone who never voted here:
    a voter is deactivated instead, so their pseudonym stays with their votes)."""
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=project.pk)
        membership = _membership_for_update(project, user)
        if Judgement.objects.filter(
            assignment__item__project=project, assignment__annotator=user
        ).exists():
            raise SetupError(
                f"{user.get_username()} has votes in this project: deactivate them instead."
            )
        _check_not_last_admin(project, membership)
        released = return_leases(project_id=project.pk, user_id=user.pk)
        before = {"role": membership.role, "is_active": membership.is_active}
        membership.delete()
        _audit(actor=actor, action="member_removed", project=project, subject=user, before=before)
    return released


# --- Invitations -------------------------------------------------------------------------

INVITATION_DAYS_MAX = 90


@dataclass(frozen=True)
class NewInvitation:
    invitation: Invitation
    token: str  # the secret; only its digest is stored

    @property
    def path(self) -> str:
        return reverse("invitation_accept", args=[self.token])


def create_invitation(
    *,
    actor,
    project: Project,
    role: str = Role.ANNOTATOR,
    max_uses: int | None = 1,
    expires_in_days: int = 7,
    note: str = "",
) -> NewInvitation:
    if role not in Role.values:
        raise SetupError(f"role is one of {', '.join(Role.values)}", field="role")
    if max_uses is not None and max_uses < 1:
        raise SetupError("max uses is at least 1 (or empty for any number)", field="max_uses")
    if not 1 <= expires_in_days <= INVITATION_DAYS_MAX:
        raise SetupError(
            f"an invitation expires after 1 to {INVITATION_DAYS_MAX} days", field="expires_in_days"
        )
    token = secrets.token_urlsafe(24)
    with transaction.atomic():
        _check_writable(project)
        invitation = Invitation.objects.create(
            project=project,
            role=role,
            token_sha256=token_digest(token),
            max_uses=max_uses,
            expires_at=timezone.now() + timedelta(days=expires_in_days),
            note=note,
            created_by=actor,
        )
        _audit(
            actor=actor,
            action="invitation_created",
            project=project,
            after={
                "invitation": invitation.pk,
                "role": role,
                "max_uses": max_uses,
                "expires_at": invitation.expires_at.isoformat(),
                "note": note,
            },
        )
    return NewInvitation(invitation=invitation, token=token)


def revoke_invitation(*, actor, invitation: Invitation) -> Invitation:
    with transaction.atomic():
        if not Invitation.objects.filter(pk=invitation.pk, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        ):
            raise SetupError("The invitation is revoked already.")
        _audit(
            actor=actor,
            action="invitation_revoked",
            project=invitation.project,
            before={"invitation": invitation.pk},
        )
    invitation.refresh_from_db()
    return invitation


def find_invitation(token: str) -> Invitation | None:
    """The usable invitation behind a link's token, or None."""
    return (
        Invitation.objects.usable()
        .select_related("project")
        .filter(token_sha256=token_digest(token), project__archived_at__isnull=True)
        .first()
    )


def accept_invitation(*, token: str, user) -> Membership:
    """Join the invitation's project with its role (one use of the link).
    A member already keeps their role (a link never demotes); a deactivated
    member is not let back in by a link (an admin reactivates them)."""
    with transaction.atomic():
        invitation = (
            Invitation.objects.select_for_update()
            .usable()
            .filter(token_sha256=token_digest(token), project__archived_at__isnull=True)
            .first()
        )
        if invitation is None:
            raise SetupError("This invitation link is not valid: expired, used up or revoked.")
        project = invitation.project
        membership = Membership.objects.filter(project=project, user=user).first()
        if membership is not None:
            if not membership.is_active:
                raise SetupError("Your membership of this project was deactivated; ask its admin.")
            return membership
        # Conditional: a concurrent use of a one-time link finds no use left.
        if not Invitation.objects.usable().filter(pk=invitation.pk).update(uses=F("uses") + 1):
            raise SetupError("This invitation link is not valid: expired, used up or revoked.")
        membership = Membership.objects.create(
            project=project, user=user, role=invitation.role, pseudonym=_pseudonym(project)
        )
        _audit(
            actor=user,
            action="invitation_accepted",
            project=project,
            subject=user,
            after={"invitation": invitation.pk, "role": invitation.role},
        )
    return membership


def sign_up_with_invitation(
    *, token: str, username: str, email: str, password: str
) -> tuple[object, Membership]:
    """Create an account and join through the link, in one transaction: a
    link that is no longer valid leaves no account behind."""
    User = get_user_model()
    with transaction.atomic():
        if find_invitation(token) is None:
            raise SetupError("This invitation link is not valid: expired, used up or revoked.")
        if User.objects.filter(username__iexact=username).exists():
            raise SetupError("That username is taken.", field="username")
        user = User.objects.create_user(username=username, email=email, password=password)
        membership = accept_invitation(token=token, user=user)
    return user, membership
