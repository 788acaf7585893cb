"""Setting up a benchmark: projects, domains, members, invitations, and users
created in bulk. One function per action, keyword-only, each in one
transaction with its audit entry (SetupEvent). Membership changes send
annotate.signals.membership_changed inside their transaction."""

from __future__ import annotations

import csv
import io
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.db.models import F
from django.urls import reverse
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from django.utils.text import slugify

from .. import signals
from ..models import (
    DOMAIN_WORDING,
    Assignment,
    AssignmentStatus,
    Domain,
    DomainKind,
    Judgement,
    Membership,
    Project,
    Role,
)
from ..services import release_open_leases, return_leases
from .models import Invitation, SetupEvent, token_digest
from .presets import PRESETS


class SetupError(Exception):
    """A change the rules refuse; the message says why (shown to the user).
    `field` names the input it is about, where there is one."""

    def __init__(self, message: str, *, field: str | None = None):
        self.field = field
        super().__init__(message)


CREATE_PROJECTS_PERMISSION = "annotate.add_project"

# Project fields an admin may change (settings page and API), with the
# database's own limits checked again by its constraints. The vote count and
# the agreement thresholds change on curation's rule page, which re-evaluates
# the verdicts (curation.verdicts.service.update_thresholds).
PROJECT_FIELDS = (
    "name",
    "description",
    "guidelines",
    "licence",
    "allow_tie",
    "require_rationale",
    "lease_minutes",
    "seed",
)
DOMAIN_FIELDS = (
    "slug",
    "title",
    "export_category",
    "kind",
    "guidelines",
    "correctness_question",
    "yes_label",
    "no_label",
)
# The correctness wording's fields: left empty, they take the model's default
# ("Is {response} correct?", "Correct", "Incorrect").
WORDING_FIELDS = ("correctness_question", "yes_label", "no_label")


def _wording(values: dict) -> dict:
    """`values` with empty wording fields replaced by their defaults."""
    return {
        name: (value or Domain._meta.get_field(name).get_default())
        if name in WORDING_FIELDS
        else value
        for name, value in values.items()
    }


# Changing these while a release uses the domain would make that release's
# Category strings or domain files disagree with the project.
DOMAIN_EXPORT_FIELDS = ("slug", "export_category")


def can_create_projects(user) -> bool:
    return user.is_authenticated and (
        user.is_superuser or user.has_perm(CREATE_PROJECTS_PERMISSION)
    )


def _audit(*, actor, action: str, project=None, subject=None, before=None, after=None) -> None:
    SetupEvent.objects.create(
        project=project,
        actor=actor if actor is not None and actor.is_authenticated else None,
        subject=subject,
        action=action,
        before=before or {},
        after=after or {},
    )


def _fields(obj, names) -> dict:
    return {name: getattr(obj, name) for name in names}


def _check_writable(project: Project) -> None:
    if project.archived_at is not None:
        raise SetupError("The project is archived (read-only); unarchive it first.")


# --- Projects ----------------------------------------------------------------------------


def create_project(
    *,
    actor,
    name: str,
    slug: str = "",
    description: str = "",
    guidelines: str = "",
    licence: str = "",
    votes_per_item: int = 3,
    escalation_votes: int = 2,
    agree_share: float = 0.8,
    allow_tie: bool = True,
    require_rationale: bool = False,
    lease_minutes: int = 30,
    seed: int = 0,
    preset: str = "mrb",
) -> Project:
    """A new project with the preset's domains; its creator becomes its admin."""
    if not can_create_projects(actor):
        raise SetupError("You may not create projects; ask a site admin for the permission.")
    if preset not in PRESETS:
        raise SetupError(
            f"unknown preset {preset!r}; use one of {', '.join(PRESETS)}", field="preset"
        )
    slug = slug or slugify(name)[:80]
    if not slug:
        raise SetupError("Give the project a slug (letters, digits, - and _).", field="slug")
    with transaction.atomic():
        if Project.objects.filter(slug=slug).exists():
            raise SetupError(f"A project with the slug {slug!r} exists already.", field="slug")
        project = Project.objects.create(
            slug=slug,
            name=name,
            description=description,
            guidelines=guidelines,
            licence=licence,
            votes_per_item=votes_per_item,
            escalation_votes=escalation_votes,
            agree_share=agree_share,
            allow_tie=allow_tie,
            require_rationale=require_rationale,
            lease_minutes=lease_minutes,
            seed=seed,
            created_by=actor,
        )
        _, domains = PRESETS[preset]
        Domain.objects.bulk_create(
            Domain(
                project=project,
                slug=d_slug,
                title=title,
                export_category=category,
                kind=kind,
                position=position,
                **DOMAIN_WORDING.get(d_slug, {}),
            )
            for position, (d_slug, title, category, kind) in enumerate(domains)
        )
        membership = Membership.objects.create(
            project=project, user=actor, role=Role.ADMIN, pseudonym=_pseudonym(project)
        )
        _audit(
            actor=actor,
            action="project_created",
            project=project,
            after={
                "slug": slug,
                "preset": preset,
                "votes_per_item": votes_per_item,
                "escalation_votes": escalation_votes,
                "agree_share": agree_share,
                **_fields(project, PROJECT_FIELDS),
            },
        )
        signals.membership_changed.send(
            sender=Membership,
            project=project,
            user=actor,
            action="added",
            membership=membership,
            released_item_ids=[],
        )
    return project


def update_project(*, actor, project: Project, **changes) -> list[str]:
    """Change the project's settings; returns the names of the fields changed."""
    unknown = set(changes) - set(PROJECT_FIELDS)
    if unknown:
        raise SetupError(f"not a project setting: {', '.join(sorted(unknown))}")
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=project.pk)
        _check_writable(project)
        before = _fields(project, PROJECT_FIELDS)
        changed = [name for name, value in changes.items() if before[name] != value]
        if not changed:
            return []
        for name in changed:
            setattr(project, name, changes[name])
        project.save(update_fields=changed)
        _audit(
            actor=actor,
            action="project_updated",
            project=project,
            before={name: before[name] for name in changed},
            after={name: changes[name] for name in changed},
        )
    return changed


def archive_project(*, actor, project: Project) -> Project:
    """Read-only from now on: no claims, imports or setup changes; votes,
    verdicts and releases stay. Open leases return to the pool."""
    with transaction.atomic():
        if not Project.objects.filter(pk=project.pk, archived_at__isnull=True).update(
            archived_at=timezone.now()
        ):
            raise SetupError("The project is archived already.")
        open_leases = Assignment.objects.filter(item__project=project, status=AssignmentStatus.OPEN)
        released = release_open_leases(open_leases, project_id=project.pk)
        _audit(
            actor=actor,
            action="project_archived",
            project=project,
            after={"released_leases": len(released)},
        )
    project.refresh_from_db(fields=["archived_at"])
    return project


def unarchive_project(*, actor, project: Project) -> Project:
    with transaction.atomic():
        if not Project.objects.filter(pk=project.pk, archived_at__isnull=False).update(
            archived_at=None
        ):
            raise SetupError("The project is not archived.")
        _audit(actor=actor, action="project_unarchived", project=project)
    project.refresh_from_db(fields=["archived_at"])
    return project


def delete_project(*, actor, project: Project) -> None:
    """Only a project nobody has voted on (nor released) can be deleted;
    any other is archived instead."""
    if Judgement.objects.filter(assignment__item__project=project).exists():
        raise SetupError("The project has votes: archive it instead of deleting it.")
    with transaction.atomic():
        try:
            # A site-wide record survives the project (project set to NULL is
            # not possible: events cascade), so the actor's trail names it.
            _audit(actor=actor, action="project_deleted", before={"slug": project.slug})
            project.delete()
        except IntegrityError as exc:  # pragma: no cover - a release or audit holds it
            raise SetupError(f"The project cannot be deleted ({exc}); archive it.") from None


# --- Domains -----------------------------------------------------------------------------


def _check_domain(project: Project, values: dict, *, exclude_pk: int | None = None) -> None:
    others = Domain.objects.filter(project=project).exclude(pk=exclude_pk)
    if "slug" in values:
        if values["slug"] != slugify(values["slug"]) or not values["slug"]:
            raise SetupError("A slug is lower-case letters, digits, - and _.", field="slug")
        if others.filter(slug=values["slug"]).exists():
            raise SetupError(f"The project has a domain {values['slug']!r}.", field="slug")
    if "export_category" in values:
        if not values["export_category"].strip():
            raise SetupError(
                "The export Category string may not be empty.", field="export_category"
            )
        if others.filter(export_category=values["export_category"]).exists():
            raise SetupError(
                f"Another domain writes the Category {values['export_category']!r}.",
                field="export_category",
            )
    if "kind" in values and values["kind"] not in DomainKind.values:
        raise SetupError(f"kind is one of {', '.join(DomainKind.values)}", field="kind")


def add_domain(
    *,
    actor,
    project: Project,
    slug: str,
    title: str,
    export_category: str,
    kind: str,
    guidelines: str = "",
    correctness_question: str = "",
    yes_label: str = "",
    no_label: str = "",
) -> Domain:
    values = {"slug": slug, "export_category": export_category, "kind": kind}
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=project.pk)
        _check_writable(project)
        _check_domain(project, values)
        position = Domain.objects.filter(project=project).count()
        domain = Domain.objects.create(
            project=project,
            slug=slug,
            title=title,
            export_category=export_category,
            kind=kind,
            guidelines=guidelines,
            position=position,
            **_wording(
                {
                    "correctness_question": correctness_question,
                    "yes_label": yes_label,
                    "no_label": no_label,
                }
            ),
        )
        _audit(
            actor=actor,
            action="domain_added",
            project=project,
            after=_fields(domain, DOMAIN_FIELDS),
        )
    return domain


def update_domain(*, actor, domain: Domain, **changes) -> list[str]:
    """Retitle, rename, re-word a domain. Its slug and export Category string
    only while no release uses it; its kind only while it has no votes."""
    unknown = set(changes) - set(DOMAIN_FIELDS)
    if unknown:
        raise SetupError(f"not a domain field: {', '.join(sorted(unknown))}")
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=domain.project_id)
        _check_writable(project)
        domain = Domain.objects.get(pk=domain.pk)
        before = _fields(domain, DOMAIN_FIELDS)
        changed = {k: v for k, v in _wording(changes).items() if before[k] != v}
        if not changed:
            return []
        _check_domain(project, changed, exclude_pk=domain.pk)
        locked = [name for name in DOMAIN_EXPORT_FIELDS if name in changed]
        if locked:
            reasons = [
                reason
                for _, reason in signals.domain_export_locked.send(sender=Domain, domain=domain)
                if reason
            ]
            if reasons:
                raise SetupError(
                    f"The domain's {' and '.join(locked)} cannot change: {'; '.join(reasons)}.",
                    field=locked[0],
                )
        if "kind" in changed and Judgement.objects.filter(assignment__item__domain=domain).exists():
            raise SetupError(
                "The domain has votes: its kind (what annotators were asked) cannot change.",
                field="kind",
            )
        for name, value in changed.items():
            setattr(domain, name, value)
        domain.save(update_fields=list(changed))
        _audit(
            actor=actor,
            action="domain_updated",
            project=project,
            before={k: before[k] for k in changed},
            after=changed,
        )
    return list(changed)


# --- Members -----------------------------------------------------------------------------


def _pseudonym(project: Project) -> str:
    """The next free "annotator-N" of the project (stable, non-identifying)."""
    taken = set(Membership.objects.filter(project=project).values_list("pseudonym", flat=True))
    n = len(taken) + 1
    while f"annotator-{n}" in taken:
        n += 1
    return f"annotator-{n}"


def _changed(project, user, action, membership, released=()) -> None:
    signals.membership_changed.send(
        sender=Membership,
        project=project,
        user=user,
        action=action,
        membership=membership,
        released_item_ids=list(released),
    )


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
        _changed(project, user, action, membership)
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
        _changed(project, user, "role_changed", membership)
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
        _changed(project, user, "deactivated", membership, released)
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
        _changed(project, user, "reactivated", membership)
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
        _changed(project, user, "removed", None, released)
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
        _changed(project, user, "added", membership)
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


# --- Users (site admins) -----------------------------------------------------------------

CSV_MAX_ROWS = 1000
CSV_MAX_BYTES = 256 * 1024
SITE_ROLES = ("", "creator", *Role.values)


@dataclass(frozen=True)
class CreatedUser:
    user: object
    role: str
    set_password_path: str


def set_password_path(user) -> str:
    """A one-time link with which `user` sets their password (Django's reset
    link: valid for PASSWORD_RESET_TIMEOUT, void once the password changes)."""
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    token = default_token_generator.make_token(user)
    return reverse("password_reset_confirm", kwargs={"uidb64": uid, "token": token})


def parse_users_csv(data: bytes, *, filename: str = "users.csv") -> list[dict]:
    """Rows of username, email, role from a CSV with that header. Every
    problem is reported with its line; nothing is returned if any."""
    if len(data) > CSV_MAX_BYTES:
        raise SetupError(f"{filename}: larger than {CSV_MAX_BYTES // 1024} kB", field="file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SetupError(f"{filename}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip().lower() for h in (reader.fieldnames or [])]
    if header[:2] != ["username", "email"] or not set(header) <= {"username", "email", "role"}:
        raise SetupError(
            f"{filename}: line 1: the header must be username,email,role (got {','.join(header)})",
            field="file",
        )
    reader.fieldnames = header
    User = get_user_model()
    username_field = User._meta.get_field("username")
    rows, problems, seen = [], [], set()
    for row in reader:
        line = reader.line_num
        if len(rows) >= CSV_MAX_ROWS:
            problems.append(f"{filename}: more than {CSV_MAX_ROWS} rows")
            break
        if None in row:
            problems.append(f"{filename}: line {line}: more fields than the header")
            continue
        username = (row.get("username") or "").strip()
        email = (row.get("email") or "").strip()
        role = (row.get("role") or "").strip().lower()
        try:
            username_field.clean(username, None)
        except ValidationError as exc:
            problems.append(f"{filename}: line {line}: username: {' '.join(exc.messages)}")
        if email:
            try:
                validate_email(email)
            except ValidationError:
                problems.append(f"{filename}: line {line}: email: {email!r} is not an address")
        if role not in SITE_ROLES:
            problems.append(
                f"{filename}: line {line}: role: {role!r} is not one of "
                f"{', '.join(r for r in SITE_ROLES if r)} (or empty)"
            )
        if username.lower() in seen:
            problems.append(f"{filename}: line {line}: username: {username!r} appears twice")
        seen.add(username.lower())
        rows.append({"line": line, "username": username, "email": email, "role": role})
    if not rows and not problems:
        problems.append(f"{filename}: no rows under the header")
    if problems:
        raise BulkUsersInvalid(problems)
    return rows


class BulkUsersInvalid(SetupError):
    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems), field="file")


def create_users_from_csv(
    *, actor, data: bytes, project: Project | None = None, filename: str = "users.csv"
) -> list[CreatedUser]:
    """Site admins: create the CSV's users (no password: each gets a one-time
    set-password link), all or none. Role `creator` grants creating projects;
    annotator/curator/admin add the user to `project` with that role."""
    if not actor.is_superuser:
        raise SetupError("Only site admins create users.")
    rows = parse_users_csv(data, filename=filename)
    User = get_user_model()
    problems = []
    # Usernames are compared without case, as sign-in by a person would.
    taken = {
        row["username"].lower()
        for row in rows
        if User.objects.filter(username__iexact=row["username"]).exists()
    }
    for row in rows:
        if row["username"].lower() in taken:
            problems.append(
                f"{filename}: line {row['line']}: username: {row['username']!r} exists already"
            )
        if row["role"] in Role.values and project is None:
            problems.append(
                f"{filename}: line {row['line']}: role: {row['role']!r} needs a project "
                "(choose one)"
            )
    if problems:
        raise BulkUsersInvalid(problems)
    if project is not None:
        _check_writable(project)
    permission = Permission.objects.get(content_type__app_label="annotate", codename="add_project")
    created = []
    with transaction.atomic():
        for row in rows:
            user = User.objects.create_user(username=row["username"], email=row["email"])
            user.set_unusable_password()
            user.save(update_fields=["password"])
            if row["role"] == "creator":
                user.user_permissions.add(permission)
            elif row["role"]:
                membership = Membership.objects.create(
                    project=project, user=user, role=row["role"], pseudonym=_pseudonym(project)
                )
                _audit(
                    actor=actor,
                    action="member_added",
                    project=project,
                    subject=user,
                    after={"role": row["role"], "is_active": True, "from": "csv"},
                )
                _changed(project, user, "added", membership)
            _audit(
                actor=actor,
                action="user_created",
                subject=user,
                after={"username": user.username, "email": user.email, "role": row["role"]},
            )
            created.append(
                CreatedUser(user=user, role=row["role"], set_password_path=set_password_path(user))
            )
    return created


def set_password_link(*, actor, project: Project, user) -> str:
    """An admin's set-password link for a member (for teams without mail)."""
    if user.is_superuser and not actor.is_superuser:
        raise SetupError("Only a site admin can reset a site admin's password.")
    _audit(actor=actor, action="password_link_made", project=project, subject=user)
    return set_password_path(user)
