"""The agreement dashboard's stored figures (those too slow to compute per request)."""

from __future__ import annotations

from django.db import models

from annotate.models import Project


class AgreementCache(models.Model):
    """The expensive agreement figures of a project (bootstrap CIs, change in
    alpha without each annotator), computed by a Celery task. Kept in the
    database so every web process and the embedded setup share them."""

    project = models.OneToOneField(
        Project, on_delete=models.CASCADE, related_name="agreement_cache"
    )
    payload = models.JSONField(default=dict, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)
    # Set when a refresh is queued, cleared when it finishes: the page shows
    # "computing…" meanwhile and never waits.
    requested_at = models.DateTimeField(null=True, blank=True)
    n_votes = models.PositiveIntegerField(default=0, help_text="Votes the payload was built from.")

    def __str__(self) -> str:
        return f"agreement cache of {self.project_id} at {self.computed_at}"
