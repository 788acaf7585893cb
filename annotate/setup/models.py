"""Invitations to a project and the audit trail of setup changes. Imported by
annotate.models, so Django registers them with the annotate app."""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone


def token_digest(token: str) -> str:
    """What is stored of an invitation's secret: its SHA-256 (the link is
    shown once, when it is made)."""
    return hashlib.sha256(token.encode()).hexdigest()


class InvitationQuerySet(models.QuerySet["Invitation"]):
    def usable(self, now=None) -> InvitationQuerySet:
        """Not revoked, not expired, uses left."""
        now = now or timezone.now()
        return self.filter(revoked_at__isnull=True, expires_at__gt=now).filter(
            Q(max_uses__isnull=True) | Q(uses__lt=F("max_uses"))
        )


class Invitation(models.Model):
    """A link that lets a person (new or existing) join a project with a role."""

    project = models.ForeignKey(
        "annotate.Project", on_delete=models.CASCADE, related_name="invitations"
    )
    role = models.CharField(
        max_length=16,
        choices=[("annotator", "Annotator"), ("curator", "Curator"), ("admin", "Admin")],
        default="annotator",
    )
    token_sha256 = models.CharField(max_length=64, unique=True)
    # None: any number of people until it expires; 1: a one-time link.
    max_uses = models.PositiveIntegerField(null=True, blank=True)
    uses = models.PositiveIntegerField(default=0)
    expires_at = models.DateTimeField()
    note = models.CharField(
        max_length=200, blank=True, help_text="Who it is for (shown to admins)."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = InvitationQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(role__in=["annotator", "curator", "admin"]),
                name="annotate_invitation_role_valid",
            ),
            models.CheckConstraint(
                condition=Q(max_uses__isnull=True) | Q(max_uses__gte=1, uses__lte=F("max_uses")),
                name="annotate_invitation_uses_within_max",
            ),
        ]
        indexes = [
            # The members page lists a project's invitations, newest first.
            models.Index(fields=["project", "-created_at"], name="annotate_invite_project_idx"),
        ]

    def __str__(self) -> str:
        return f"invitation to {self.project_id} as {self.role}"

    @property
    def state(self) -> str:
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at <= timezone.now():
            return "expired"
        if self.max_uses is not None and self.uses >= self.max_uses:
            return "used"
        return "open"


class SetupEvent(models.Model):
    """Who changed a project's setup or the site's people, when, before and
    after. Append-only, like curation's AuditEvent (which is per item)."""

    project = models.ForeignKey(
        "annotate.Project",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="setup_events",
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The person the change is about (a member, an invited or created user).
    subject = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    action = models.CharField(max_length=40)
    before = models.JSONField(default=dict, blank=True)
    after = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # A project's setup history on its settings page, newest first.
            models.Index(fields=["project", "-created_at"], name="annotate_setup_project_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.action}"
