"""Cutting a benchmark release (recorded, then built in the background by
curation.releases.build) and comparing two releases.
"""

from __future__ import annotations

import json

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef

from annotate.models import Project
from curation.models import (
    RELEASABLE_ANY_SLOT,
    PairwiseMode,
    Release,
    ReleaseItem,
    Verdict,
)
from curation.releases.rekey import new_salt

NOTHING_TO_RELEASE = (
    "Nothing to release: no item of the chosen domains is agreed or resolved"
    "{filtered}. Decide some items (Curation) and cut the release again; "
    "the version was not used."
)


class ReleaseError(Exception):
    pass


class ReleaseVersionTaken(ReleaseError):
    """The version exists (perhaps created a moment ago by another request)."""


class NothingToRelease(ReleaseError):
    """The release would hold no item."""


def included_verdicts(
    project, domains, min_label_quality: float | None = None, filters: dict | None = None
):
    """The verdicts a release of these domains holds (agreed or resolved, and
    above the consensus-quality threshold when one is given)."""
    verdicts = Verdict.objects.filter(
        RELEASABLE_ANY_SLOT, project=project, item__domain__slug__in=domains
    )
    if min_label_quality is not None:
        from curation.quality.release_filter import below_threshold

        verdicts = verdicts.exclude(below_threshold(min_label_quality))
    if filters:
        from curation.releases.filters import kept

        verdicts = kept(verdicts, filters)
    return verdicts


def create_release(
    *,
    project: Project,
    version: str,
    notes: str,
    domains: list[str],
    seed: int,
    user,
    enqueue: bool = True,
    min_label_quality: float | None = None,
    rekey: bool = False,
    pairwise: str = "",
    too_easy_ensemble: list[int] | None = None,
    **filter_fields,
) -> Release:
    """Record a new release and (unless enqueue=False) queue its build once
    the transaction commits. `rekey` gives its files label-free IDs
    (curation.releases.rekey) under the project's re-keying salt."""
    from config.celery import enqueue_on_commit
    from curation.releases.tasks import build_release_task

    version = version.strip()
    if not version:
        raise ReleaseError("Give the release a version, e.g. v1.0.")
    # The version names the published folder: the form's rule holds for every
    # caller (`../../images` would make publishing delete the stored images).
    if any(c in version for c in "/\\ ") or version.startswith(".") or not version.isprintable():
        raise ReleaseError("Use letters, digits, dots, dashes or underscores in the version.")
    limit = Release._meta.get_field("version").max_length
    if len(version) > limit:
        raise ReleaseError(f"The version is longer than {limit} characters.")
    if pairwise not in PairwiseMode.values:
        raise ReleaseError(f"Unknown pairwise decomposition {pairwise!r}.")
    known = set(project.domains.values_list("slug", flat=True))
    unknown = sorted(set(domains) - known)
    if unknown or not domains:
        raise ReleaseError(f"Choose at least one known domain (unknown: {', '.join(unknown)}).")
    taken = f"Release {version} already exists; releases are immutable."
    if Release.objects.filter(project=project, version=version).exists():
        raise ReleaseVersionTaken(taken)
    if min_label_quality is not None:
        from curation.quality.release_filter import check_filter

        check_filter(project=project, threshold=min_label_quality)
    from curation.releases.filters import check_filters

    # The benchmark-construction filters and balancing (the form's and the
    # API's fields, one validation): curation.releases.filters.check_filters.
    filters = check_filters(
        project=project, seed=seed, too_easy_ensemble=too_easy_ensemble, **filter_fields
    )
    # Refused before the row exists: an empty release would spend its version.
    # The filters' matched pairs are read here once (seconds at 100,000 items).
    included = included_verdicts(project, domains, min_label_quality, filters)
    if not included.exists():
        filtered = "" if min_label_quality is None else " above the consensus-quality filter"
        if any(name in filters for name in ("too_easy", "low_consensus", "disagreement")):
            filtered += " that the benchmark-construction filters keep"
        raise NothingToRelease(NOTHING_TO_RELEASE.format(filtered=filtered))
    _check_media_is_written(project, domains, included)
    with transaction.atomic():
        try:
            # Two requests past the check above: the unique constraint decides.
            with transaction.atomic():
                release = Release.objects.create(
                    project=project,
                    version=version,
                    notes=notes,
                    domains=sorted(domains),
                    seed=seed,
                    created_by=user,
                    min_label_quality=min_label_quality,
                    rekey_salt=rekey_salt(project) if rekey else "",
                    pairwise=pairwise,
                    filters=filters,
                )
        except IntegrityError:
            raise ReleaseVersionTaken(taken) from None
        if enqueue:
            enqueue_on_commit(build_release_task, release.pk)
    return release


def _check_media_is_written(project, domains, included) -> None:
    """Refuse a release that would leave videos or audio files out (issue 35):
    items holding them are released only by a benchmark that writes them
    (`carries_media`); the files of the others hold text and pictures."""
    from annotate.models import ItemPart, PartKind
    from curation.benchmarks import registry

    with_media = included.filter(
        Exists(
            ItemPart.objects.filter(
                item_id=OuterRef("item_id"), kind__in=[PartKind.VIDEO, PartKind.AUDIO]
            )
        )
    )
    chosen = list(project.domains.filter(slug__in=domains))
    if any(getattr(b, "carries_media", False) for b in registry.for_domains(chosen)):
        return
    n = with_media.count()
    if n:
        raise ReleaseError(
            f"{n} of the chosen items hold a video or audio file, and no benchmark format "
            "of these domains writes those: their release would leave the files out. "
            "Nothing was released; choose domains without video or audio, or a benchmark "
            "format that carries them."
        )


def rekey_salt(project: Project) -> str:
    """The salt of the project's re-keyed releases: the one its earlier
    re-keyed releases used (so an item keeps its new ID from release to
    release), else a new secret one."""
    earlier = (
        Release.objects.filter(project=project)
        .exclude(rekey_salt="")
        .order_by("created_at", "pk")
        .values_list("rekey_salt", flat=True)
        .first()
    )
    return earlier or new_salt()


def released_id_map(release: Release):
    """A re-keyed release's {old ID: new ID} as JSON text, in pieces (one
    query, streamed), sorted by old ID."""
    rows = (
        ReleaseItem.objects.filter(release=release)
        .exclude(released_id="")
        .order_by("external_id")
        .values_list("external_id", "released_id")
        .iterator(chunk_size=2000)
    )
    yield "{"
    for n, (old, new) in enumerate(rows):
        yield ("\n  " if n == 0 else ",\n  ") + f"{json.dumps(old)}: {json.dumps(new)}"
    yield "\n}\n"


def diff_releases(old: Release, new: Release) -> dict:
    """Items added, removed and with the chosen response flipped."""
    before = {
        r.external_id: r
        for r in ReleaseItem.objects.filter(release=old).only(
            "external_id", "domain", "chosen", "item_id"
        )
    }
    after = {
        r.external_id: r
        for r in ReleaseItem.objects.filter(release=new).only(
            "external_id", "domain", "chosen", "item_id"
        )
    }
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    flipped = sorted(k for k in set(before) & set(after) if before[k].chosen != after[k].chosen)
    return {
        "added": [after[k] for k in added],
        "removed": [before[k] for k in removed],
        "flipped": [(before[k], after[k]) for k in flipped],
        "unchanged": len(set(before) & set(after)) - len(flipped),
    }
