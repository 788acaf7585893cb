"""Recording a training mix (built in the background by
curation.releases.mixes.build) and who may mix what."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import QuerySet

from annotate.models import Project
from annotate.projects import CURATOR_ROLES
from curation.models import Mix, MixSource, Provenance, Release, ReleaseStatus, VerdictStatus
from curation.models.mixes import scope_of

STATUSES = (VerdictStatus.AGREED, VerdictStatus.RESOLVED)
PROVENANCES = tuple(p for p in Provenance.values if p)


# The name names the published folder (mixes/<id>/<name>/<version>).
SLUG = re.compile(r"[-a-zA-Z0-9_]{1,80}")


class MixError(Exception):
    pass


class MixVersionTaken(MixError):
    pass


@dataclass(frozen=True)
class SourceChoice:
    """A source as asked for: a project's slug, and a release version or None
    for the whole project."""

    project: str
    release: str | None = None
    cap: int | None = None
    weight: float | None = None


def curated_projects(user) -> QuerySet[Project]:
    """Projects whose data `user` may mix: those they curate or administer."""
    return Project.objects.visible_to(user).filter(
        member_role__in=CURATOR_ROLES  # type: ignore[misc]  # (visible_to's annotation)
    )


def may_mix(user, **_kwargs) -> None:
    """The body check (common.body_guard) of the forms that create a mix:
    403 unless `user` curates or administers a project (or is a superuser)."""
    if not user.is_superuser and not curated_projects(user).exists():
        raise PermissionDenied("Training mixes are for the curators and admins of a project.")


def mixable_releases(user) -> QuerySet[Release]:
    return (
        Release.objects.ready()
        .filter(project__in=curated_projects(user).values("pk"))
        .select_related("project")
        .order_by("project__slug", "-created_at")
    )


def create_mix(
    *,
    user,
    name: str,
    version: str,
    sources: list[SourceChoice],
    statuses: list[str],
    provenances: list[str],
    min_share: float | None = None,
    domains: list[str] | None = None,
    mode: str = Mix.Mode.CAPS,
    size: int | None = None,
    dedup: bool = True,
    seed: int = 0,
    notes: str = "",
    enqueue: bool = True,
) -> Mix:
    """Check and record a mix, and queue its build once the transaction commits."""
    from config.celery import enqueue_on_commit
    from curation.releases.mixes.tasks import build_mix_task

    if not SLUG.fullmatch(name or ""):
        raise MixError("Name the mix with letters, digits, dashes or underscores (a slug).")
    version = version.strip()
    if not version or any(c in version for c in "/\\ ") or version.startswith("."):
        raise MixError("Use letters, digits, dots, dashes or underscores in the version.")
    if not version.isprintable() or len(version) > 40:
        raise MixError("The version is at most 40 printable characters.")
    if not sources:
        raise MixError("Choose at least one source.")
    if not set(statuses) <= set(STATUSES) or not statuses:
        raise MixError(f"Choose verdict statuses among {', '.join(STATUSES)}.")
    if not set(provenances) <= set(PROVENANCES) or not provenances:
        raise MixError(f"Choose provenances among {', '.join(PROVENANCES)}.")
    if min_share is not None and not 0 <= min_share <= 1:
        raise MixError("The minimum agreement share is between 0 and 1.")
    if mode not in Mix.Mode.values:
        raise MixError("The mode is caps or weights.")
    # Every source must come from a project the user curates: one query.
    wanted = {s.project for s in sources}
    projects = {p.slug: p for p in curated_projects(user).filter(slug__in=wanted)}
    missing = sorted(wanted - set(projects))
    if missing:
        raise MixError(f"You do not curate: {', '.join(missing)}.")
    releases = {
        (r.project.slug, r.version): r
        for r in Release.objects.filter(
            project__in=projects.values(), status=ReleaseStatus.READY
        ).select_related("project")
    }
    rows, seen = [], set()
    for position, s in enumerate(sources):
        release = None
        if s.release:
            release = releases.get((s.project, s.release))
            if release is None:
                raise MixError(f"{s.project} has no ready release {s.release}.")
        if (s.project, s.release) in seen:
            raise MixError(f"{s.project}{'@' + s.release if s.release else ''} is listed twice.")
        seen.add((s.project, s.release))
        if s.cap is not None and s.cap < 1:
            raise MixError("A cap is at least 1.")
        if s.weight is not None and s.weight <= 0:
            raise MixError("A weight is above 0.")
        rows.append(
            MixSource(
                position=position,
                project=projects[s.project],
                release=release,
                cap=s.cap if mode == Mix.Mode.CAPS else None,
                weight=(s.weight or 1.0) if mode == Mix.Mode.WEIGHTS else None,
            )
        )
    filters = {
        "statuses": sorted(statuses),
        "provenances": sorted(provenances),
        "min_share": min_share,
        "domains": sorted(domains or []),
    }
    taken = f"Mix {name} {version} already exists; mixes are immutable."
    # Only mixes the user can see block a name (issue 29): one of projects
    # they do not all curate may hold it unbeknown to them. The constraint
    # decides a race, within one set of source projects (Mix.scope), all of
    # which the user curates: it too only ever names a mix they can see.
    if Mix.objects.visible_to(user).filter(name=name, version=version).exists():
        raise MixVersionTaken(taken)
    scope = scope_of(p.pk for p in projects.values())
    with transaction.atomic():
        try:
            with transaction.atomic():  # two requests past the check: the constraint decides
                mix = Mix.objects.create(
                    name=name,
                    version=version,
                    scope=scope,
                    notes=notes,
                    seed=seed,
                    mode=mode,
                    size=size if mode == Mix.Mode.WEIGHTS else None,
                    filters=filters,
                    dedup=dedup,
                    created_by=user,
                )
        except IntegrityError:
            raise MixVersionTaken(taken) from None
        for row in rows:
            row.mix = mix
        MixSource.objects.bulk_create(rows)
        if enqueue:
            enqueue_on_commit(build_mix_task, mix.pk)
    return mix
