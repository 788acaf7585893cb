"""Curation's answers to annotate.setup (connected in CurationConfig.ready)."""

from __future__ import annotations

from curation.models import Release, ReleaseStatus


def releases_using_domain(sender, *, domain, **kwargs) -> str | None:
    """Why `domain`'s export string and slug may not change: the releases
    (not failed) that include it. Few releases per project: read in Python,
    as SQLite has no JSON `contains` for lists."""
    versions = [
        release.version
        for release in Release.objects.filter(project_id=domain.project_id)
        .exclude(status=ReleaseStatus.FAILED)
        .only("version", "domains")
        if domain.slug in release.domains
    ]
    if not versions:
        return None
    return f"used by release{'s' if len(versions) > 1 else ''} {', '.join(sorted(versions))}"
