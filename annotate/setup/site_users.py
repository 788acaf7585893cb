"""Site admins' user tools: many users at once from a CSV, set-password links."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from annotate.models import (
    Membership,
    Project,
    Role,
)
from annotate.setup.accounts import check_may_manage_account
from annotate.setup.service import SetupError, _audit, _check_writable
from annotate.setup.team import _pseudonym

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
                Membership.objects.create(
                    project=project, user=user, role=row["role"], pseudonym=_pseudonym(project)
                )
                _audit(
                    actor=actor,
                    action="member_added",
                    project=project,
                    subject=user,
                    after={"role": row["role"], "is_active": True, "from": "csv"},
                )
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


def set_password_link(*, actor, user, project: Project | None = None) -> str:
    """A site admin's set-password link for someone (for teams without mail).
    Project roles grant nothing here (annotate.setup.accounts): raises
    AccountRefused unless `actor` may manage `user`'s account."""
    check_may_manage_account(actor, user)
    _audit(actor=actor, action="password_link_made", project=project, subject=user)
    return set_password_path(user)
