"""Building a training mix (run by a Celery task) and publishing it
atomically, the way a release is (curation.releases.build): a one-shot
transition to `building`, a work folder, the zip and its checksum
(curation.releases.exporter), publishing through curation.releases.publishing
under ``mixes/<id>/<name>/<version>``. A failed build leaves the mix `failed` and
nothing visible; building again is safe.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
import uuid
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from curation.models import RELEASABLE, Mix, ReleaseItem, ReleaseStatus, Verdict
from curation.releases import exporter, pairwise, parquet, publishing
from curation.releases.build import (
    _HOST,
    PROGRESS_SECONDS,
    STALE_BUILD,
    _copy_image,
    _remove_dead_attempts,
    public_error,
)
from curation.releases.content import ItemContent, item_contents
from curation.releases.mixes import files
from curation.releases.mixes.rows import Candidate, Filters, SourceSpec, select

log = logging.getLogger(__name__)

CHUNK = 2000
# The item's content comes from its parts (curation.releases.content).
_ITEM = (
    "item_id",
    "item__external_id",
    "item__domain__slug",
    "item__domain__export_category",
    "item__votes_1",
    "item__votes_2",
    "item__votes_tie",
)


class MixBuildError(Exception):
    pass


def _take(mix_id: int, *, take_over: bool = False) -> bool:
    """One-shot transition to building (pending, failed, or a dead build)."""
    now = timezone.now()
    fresh = dict(status=ReleaseStatus.BUILDING, started_at=now, error="", progress_done=0)
    if Mix.objects.filter(
        pk=mix_id, status__in=[ReleaseStatus.PENDING, ReleaseStatus.FAILED]
    ).update(**fresh):
        return True
    dead = Mix.objects.filter(pk=mix_id, status=ReleaseStatus.BUILDING)
    if not take_over:
        dead = dead.filter(started_at__lt=now - STALE_BUILD)
    return bool(dead.update(started_at=now, error="", progress_done=0))


def _candidate(row, content: ItemContent, chosen: str, status: str, provenance: str) -> Candidate:
    (_, ext_id, domain, category, v1, v2, vt) = row
    votes = v1 + v2 + vt
    return Candidate(
        external_id=ext_id,
        domain=domain,
        category=category,
        prompt=content.prompt,
        response_1=content.response_1,
        response_2=content.response_2,
        chosen=chosen,
        image_sha256=content.image_sha256,
        image_ext=content.image_ext,
        status=status,
        provenance=provenance,
        share=((v1 if chosen == "1" else v2) / votes) if votes else None,
        image_source=content.image_file,
    )


def read_candidates(source) -> list[Candidate]:
    """A source's decided pairs, one query (and one per CHUNK for their
    parts). A release gives its frozen
    membership, chosen side and provenance; the verdict status and the vote
    tallies (agreement share) are read as they are now. A project gives its
    items agreed or resolved with a side now."""
    rows: QuerySet[Any, Any]
    if source.release_id:
        rows = (
            # Records only: a pair only in another benchmark's files has no
            # prompt image and text responses to train on.
            ReleaseItem.objects.filter(release_id=source.release_id)
            .mrb_records()
            .order_by("external_id")
            .values_list("chosen", "item__verdict__status", "provenance", *_ITEM)
        )
    else:
        rows = (
            Verdict.objects.filter(RELEASABLE, project_id=source.project_id)
            .order_by("item__external_id")
            .values_list("final_choice", "status", "provenance", *_ITEM)
        )
    candidates: list[Candidate] = []
    chunk: list = []

    def flush() -> None:
        contents = item_contents(r[3] for r in chunk)  # one query per chunk
        candidates.extend(_candidate(r[3:], contents[r[3]], r[0], r[1] or "", r[2]) for r in chunk)
        chunk.clear()

    for row in rows.iterator(chunk_size=CHUNK):
        chunk.append(row)
        if len(chunk) == CHUNK:
            flush()
    if chunk:
        flush()
    if source.release_id and source.release.pairwise:
        candidates += ranked_pairs(source.release)
    return candidates


def ranked_pairs(release) -> list[Candidate]:
    """The pairs of a release's pairwise decomposition, from each ranked
    member's frozen ranking (ReleaseItem.ranks) and its content: the rows of
    its pairwise/ files. `share`: None (votes rank, they pick no side)."""
    rows = (
        ReleaseItem.objects.filter(release=release)
        .exclude(ranks="")
        .order_by("external_id")
        .values_list("ranks", "item__verdict__status", "provenance", *_ITEM)
    )
    out: list[Candidate] = []
    for start in range(0, rows.count(), CHUNK):
        chunk = list(rows[start : start + CHUNK])
        contents = item_contents(r[3] for r in chunk)
        for ranks, status, provenance, item_id, ext_id, domain, category, *_ in chunk:
            content = contents[item_id]
            for chosen, rejected in pairwise.pairs(pairwise.parse_ranks(ranks), release.pairwise):
                out.append(
                    Candidate(
                        external_id=pairwise.pair_id(ext_id, chosen, rejected),
                        domain=domain,
                        category=category,
                        prompt=content.prompt,
                        response_1=content.responses[chosen - 1],
                        response_2=content.responses[rejected - 1],
                        chosen="1",
                        image_sha256=content.image_sha256 or "",
                        image_ext=content.image_ext,
                        status=status or "",
                        provenance=provenance,
                        share=None,
                        image_source=content.image_file or "",
                        group=ext_id,
                    )
                )
    return out


def build_mix(*, mix_id: int, take_over: bool = False) -> Mix:
    """Build and publish a mix. Idempotent: a ready mix is returned as it is."""
    if not _take(mix_id, take_over=take_over):
        return Mix.objects.get(pk=mix_id)
    mix = Mix.objects.get(pk=mix_id)
    root = publishing.work_root()
    attempt = f"mix{mix.pk}"
    _remove_dead_attempts(root / ".building", attempt)
    work = root / ".building" / f"{attempt}-{_HOST}-{os.getpid()}-{uuid.uuid4().hex}"
    name = f"{mix.name}-{mix.version}"
    try:
        folder = work / name
        folder.mkdir(parents=True)
        manifest = _write(mix, folder)
        archive = work / f"{name}.zip"
        exporter.write_zip(folder, archive, root=name)
        sha = exporter.sha256_file(archive)
        _publish(mix, folder, archive, sha, manifest)
    except Exception as exc:
        log.exception("mix %s failed", mix_id)
        Mix.objects.filter(pk=mix_id, status=ReleaseStatus.BUILDING).update(
            status=ReleaseStatus.FAILED, error=public_error(exc, work=work, hidden=[root])
        )
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return Mix.objects.get(pk=mix_id)


def _write(mix: Mix, folder):
    sources = list(mix.sources.select_related("project", "release").order_by("position"))
    specs = [SourceSpec(label=s.label, cap=s.cap, weight=s.weight) for s in sources]
    rows = [read_candidates(s) for s in sources]
    selection = select(
        specs,
        rows,
        filters=Filters.from_json(mix.filters),
        seed=mix.seed,
        dedup=mix.dedup,
        weights_mode=mix.mode == Mix.Mode.WEIGHTS,
        size=mix.size,
    )
    total = len(selection.kept)
    if not total:
        raise MixBuildError("No pair passes the filters: the mix would be empty.")
    Mix.objects.filter(pk=mix.pk).update(progress_total=total, progress_done=0)
    done, last = 0, 0.0

    def progress(n: int) -> None:
        nonlocal done, last
        done += n
        if settings.RELEASE_BUILD_ITEM_DELAY:  # fault tests: a build slow enough to watch
            time.sleep(settings.RELEASE_BUILD_ITEM_DELAY * n)
        if time.monotonic() - last >= PROGRESS_SECONDS or done == total:
            last = time.monotonic()
            Mix.objects.filter(pk=mix.pk, status=ReleaseStatus.BUILDING).update(progress_done=done)

    meta = {
        "name": mix.name,
        "version": mix.version,
        "seed": mix.seed,
        "created_at": mix.created_at.isoformat(),
        "notes": mix.notes,
        "mode": mix.mode,
        "size": mix.size,
        "dedup": mix.dedup,
        "filters": mix.filters,
        "sources": [
            {
                "label": s.label,
                "kind": "release" if s.release_id else "project",
                "project": s.project.slug,
                "release": s.release.version if s.release else None,
                "release_sha256": s.release.sha256 if s.release else None,
                "cap": s.cap,
                "weight": s.weight,
            }
            for s in sources
        ],
    }
    return files.write_mix(
        folder,
        selection,
        labels=[s.label for s in specs],
        meta=meta,
        copy_image=_copy_image,
        parquet=parquet.available(),
        progress=progress,
    )


def _publish(mix: Mix, folder, archive, sha: str, manifest: dict) -> None:
    target = publishing.target_for(
        slug=mix.name,
        version=mix.version,
        pk=f"mix{mix.pk}",
        folder=folder,
        archive=archive,
        sha256=sha,
        # Under the mix's own id: two mixes of one name and version (of
        # different projects: Mix.scope) never share, or clear, a folder.
        root=f"mixes/{mix.pk}",
    )
    published = False
    try:
        with transaction.atomic():
            # The row lock serialises two attempts (see build._record_and_publish).
            if not (
                Mix.objects.select_for_update()
                .filter(pk=mix.pk, status=ReleaseStatus.BUILDING)
                .exists()
            ):
                raise MixBuildError("the mix changed state while it was being built")
            target.clear_leftovers()
            Mix.objects.filter(pk=mix.pk).update(
                status=ReleaseStatus.READY,
                sha256=sha,
                folder=target.folder_name,
                archive=target.archive_name,
                size_bytes=archive.stat().st_size,
                manifest=manifest,
                counts=manifest["counts"],
                report={"sources": manifest["report"]},
                progress_done=manifest["total"],
                progress_total=manifest["total"],
                finished_at=timezone.now(),
            )
            target.publish()  # last, inside the transaction (as a release does)
        published = True
    except BaseException:
        try:
            published = Mix.objects.filter(pk=mix.pk, status=ReleaseStatus.READY).exists()
        except Exception:
            published = True
        raise
    finally:
        target.discard(published=published)
