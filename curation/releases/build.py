"""Building a release (run by a Celery task) and publishing it atomically.

The build streams the included items from the database in chunks, writes the
files with curation.releases.exporter (and .parquet) into a temporary folder,
zips it, and publishes both only when everything is written: with a rename on
the local file system, by upload and copy into the "releases" storage on a
bucket (curation.releases.publishing). A build that dies leaves the release
`failed` and nothing visible; building again is safe.

Everything the release holds is read in one snapshot of the database
(curation.releases.snapshot), while a thread of the build writes its
heartbeat and progress where others see them (curation.releases.heartbeat);
a build whose heartbeat stopped is taken over (curation.releases.recovery).
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from functools import reduce
from itertools import chain
from operator import or_
from pathlib import Path

from django.conf import settings
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from annotate.models import Membership
from common.storage import local_path, open_stored
from curation.benchmarks import registry
from curation.benchmarks.base import BuildContext
from curation.models import (
    Release,
    ReleaseItem,
    ReleaseStatus,
)
from curation.releases import (
    exporter,
    filter_outputs,
    manifest_sections,
    parquet,
    publishing,
    snapshot,
    trl,
)
from curation.releases.content import item_contents
from curation.releases.groups import freeze_group_keys
from curation.releases.heartbeat import BuildHeartbeat
from curation.releases.members import MEMBER_FIELDS, ROW_FIELDS, VoteExtras, export_items
from curation.releases.pairwise_files import write_pairs
from curation.releases.rekey import in_new_id_order
from curation.releases.service import ReleaseError, included_verdicts

log = logging.getLogger(__name__)

CHUNK = 2000
# The least time between two progress updates of a building release.
PROGRESS_SECONDS = 0.5
# Training mixes (curation.releases.mixes.build): one still "building" after
# this long is taken to have died with its worker. Releases have a heartbeat.
STALE_BUILD = timedelta(minutes=30)


def _take(release_id: int, *, take_over: bool = False) -> bool:
    """One-shot transition to building: a pending or failed release, or a
    dead build (its heartbeat stale: Release.objects.stalled), or any build
    with `take_over` (its task's message came back from a dead worker)."""
    from django.db.models import F

    now = timezone.now()
    started = {
        "started_at": now,
        "heartbeat_at": now,
        "error": "",
        "progress_done": 0,
        "attempts": F("attempts") + 1,
    }
    taken = Release.objects.filter(
        pk=release_id, status__in=[ReleaseStatus.PENDING, ReleaseStatus.FAILED]
    ).update(status=ReleaseStatus.BUILDING, **started)
    if not taken:
        dead = Release.objects.filter(pk=release_id, status=ReleaseStatus.BUILDING)
        if not take_over:
            dead = dead.stalled(now)
        taken = dead.update(**started)
    return bool(taken)


def build_release(*, release_id: int, progress=None, take_over: bool = False) -> Release:
    """Build and publish a release. Idempotent: a ready release is returned
    as it is; a failed one is built again from scratch. `take_over` rebuilds
    one left `building` by a worker known to have died (the build task's
    message was redelivered).

    Everything the release holds is read in one snapshot of the database
    (curation.releases.snapshot), so votes committed meanwhile neither break
    the build nor slip into it: it holds what was included at its start.
    Its heartbeat and progress are written beside it (.heartbeat)."""
    if not _take(release_id, take_over=take_over):
        return Release.objects.get(pk=release_id)
    root = publishing.work_root()
    _remove_dead_attempts(root / ".building", release_id)
    work = root / ".building" / f"{release_id}-{_HOST}-{os.getpid()}-{uuid.uuid4().hex}"
    try:
        with BuildHeartbeat(release_id, threaded=snapshot.can_take_snapshot()) as beat:
            with snapshot.read_snapshot():
                # The snapshot's first read: the release as it stands now.
                release = Release.objects.select_related("project").get(pk=release_id)
                name = f"{release.project.slug}-{release.version}"
                folder = work / name
                folder.mkdir(parents=True)
                manifest, members, warnings = _write(release, folder, progress, beat)
            archive = work / f"{name}.zip"
            exporter.write_zip(folder, archive, root=name)
            sha = exporter.sha256_file(archive)
            _publish(release, folder, archive, sha, manifest, members, warnings)
    except Exception as exc:
        log.exception("release %s failed", release_id)
        # Only a build still in progress fails: an attempt overtaken by a
        # retry that already published must not mark the ready release failed.
        Release.objects.filter(pk=release_id, status=ReleaseStatus.BUILDING).update(
            status=ReleaseStatus.FAILED, error=public_error(exc, work=work, hidden=[root])
        )
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return Release.objects.get(pk=release_id)


_HOST = socket.gethostname()


def public_error(exc: BaseException, *, work: Path, hidden: list[Path]) -> str:
    """What the release page may say about a failed build: the error and the
    file it concerns relative to the release folder, never a server path,
    host name or process id (the log has the full traceback)."""
    if isinstance(exc, OSError) and exc.strerror:
        names = [str(f) for f in (exc.filename, exc.filename2) if f]
        shown = [_relative_to(name, work) for name in names]
        text = f"{type(exc).__name__}: {exc.strerror}"
        if shown:
            text += " (" + ", ".join(shown) + ")"
    else:
        text = f"{type(exc).__name__}: {exc}"
    for path in sorted({str(work), *map(str, hidden)}, key=len, reverse=True):
        text = text.replace(path, "…")
    return text.replace(_HOST, "…")[:2000]


def _relative_to(name: str, work: Path) -> str:
    """`name` inside the release folder (below work/<release name>/), or
    just its file name."""
    path = Path(name)
    try:
        parts = path.relative_to(work).parts
    except ValueError:
        return path.name
    return "/".join(parts[1:]) if len(parts) > 1 else path.name


def _remove_dead_attempts(building: Path, release_id: int | str) -> None:
    """Remove the work folders of earlier attempts at this release whose
    process is gone (a killed worker never reaches build_release's `finally`).
    A folder is named <release>-<host>-<pid>-<random>; only this host's can be
    checked, and a live process's is left alone (a slow build taken over as
    dead must fail by losing the race, not by losing its files)."""
    for folder in building.glob(f"{release_id}-{_HOST}-*-*"):
        pid = folder.name[len(f"{release_id}-{_HOST}-") :].split("-", 1)[0]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except PermissionError:  # alive, another user's
            pass


def _included(release: Release):
    """The release's verdicts before its benchmark-construction filters."""
    return included_verdicts(release.project, release.domains, release.min_label_quality)


def _write(release: Release, folder: Path, bar, beat: BuildHeartbeat):
    """Write every file of the release: each of its benchmarks prepares its
    part (curation.benchmarks: its own files, its members, its manifest
    section), then the shared pair layout is streamed from the records part,
    and the card and manifest are written from all of them."""
    project = release.project
    domains = list(project.domains.filter(slug__in=release.domains).order_by("position", "slug"))
    # The filters' matched pairs, read once, and the length balancing's
    # seeded drops (curation.releases.filter_outputs).
    before = _included(release)
    filtered = filter_outputs.filtered_rows(release, before)
    included, balance_drops, balance_external = filter_outputs.balanced(
        release, filter_outputs.without_filtered(before, filtered)
    )
    salt = release.rekey_salt
    pseudonyms = dict(
        Membership.objects.filter(project=project).values_list("user_id", "pseudonym")
    )
    # Graded strengths and letter grades join each vote in provenance.jsonl
    # where the project collects them (other releases' bytes are unchanged).
    vote_extras = VoteExtras(strength=project.is_graded, grades=any(d.asks_grade for d in domains))
    ctx = BuildContext(
        release=release,
        project=project,
        domains=domains,
        included=included,
        folder=folder,
        salt=salt,
        pseudonyms=pseudonyms,
        vote_extras=vote_extras,
    )
    benchmarks = registry.for_domains(domains)
    parts = [benchmark.prepare(ctx) for benchmark in benchmarks]
    records = next((p.records for p in parts if p.records is not None), None)
    if records is None:  # a registry without the records' benchmark
        raise ReleaseError("No benchmark of this release writes its records; nothing was built.")
    verdicts = records.verdicts
    ids_by_domain, old_by_domain = records.ids_by_domain, records.old_by_domain
    # Released IDs: the external IDs, or label-free ones (Release.rekey_salt);
    # the records' win where a member is also in a benchmark's own files.
    released: dict[str, str] = {}
    for part in sorted(parts, key=lambda p: p.records is not None):
        released.update(part.released)
    total = records.total
    # Emptied since it was cut (create_release refuses an empty one).
    if not total and not any(part.members_by_domain for part in parts):
        raise ReleaseError(
            "Nothing to release: no included item is agreed or resolved any more "
            "(reopened since the release was cut); nothing was published."
        )
    beat.report(progress_total=total, progress_done=0)
    warnings = [w for part in parts for w in part.warnings]
    snapshot = included.aggregate(at=Max("updated_at"))["at"]
    meta = exporter.ReleaseMeta(
        project=project.slug,
        project_name=project.name,
        version=release.version,
        seed=release.seed,
        snapshot_at=snapshot.isoformat() if snapshot else "",
        licence=project.licence,
        notes=release.notes,
        domains=[(d.slug, d.title, d.export_category) for d in domains],
        agreement=manifest_sections.agreement(project, domains),
        annotation=manifest_sections.annotation(project, release.domains),
        card_sections=benchmarks,
    )
    # Every member: the records and the members of each benchmark's own files.
    written = reduce(or_, [p.written for p in parts if p.written is not None], included.none())
    meta.manifest_extra = manifest_sections.extra(
        release, written, meta.snapshot_at, released=released if salt else None
    )
    if any(part.manifest for part in parts) or salt:
        meta.manifest_extra.update(
            manifest_sections.members(
                domains=domains,
                ids_by_domain=ids_by_domain,
                parts=parts,
                rekey_prefixes=[b.rekey_prefix for b in registry.all_benchmarks()],
                rekeyed=bool(salt),
            )
        )
    if release.min_label_quality is not None:
        from curation.quality.release_filter import filter_summary

        meta.annotation["label_quality_filter"] = filter_summary(release)
    left_out: list[dict] = []  # provenance.jsonl's lines of the filtered pairs
    if release.filters:
        from curation.releases import filters as release_filters

        summary = release_filters.summary(release, counts=filter_outputs.counts_of(filtered))
        balancing = filter_outputs.balancing_entry(release, balance_drops)
        if balancing:
            summary["length_balance"] = balancing
        meta.annotation["release_filters"] = summary
        held = filter_outputs.write_held_out(release, folder, filtered, salt)
        if held:
            meta.manifest_extra["held_out"] = held
        left_out = filter_outputs.provenance_lines(release, filtered, balance_external, salt)
    # pairwise/<domain>.parquet: the ranked members of the benchmarks' own
    # files as TRL pairs, in the curator's mode (curation.releases.pairwise_files).
    decomposed = None
    if release.pairwise and parquet.available():
        own = [p.written for p in parts if p.written is not None and p.records is None]
        ranked = reduce(or_, own, included.none()).exclude(pk__in=verdicts.values("pk"))
        decomposed = write_pairs(
            folder, verdicts=ranked, mode=release.pairwise, released=released, domains=domains
        )
        meta.manifest_extra["pairwise"] = decomposed.manifest
    elif release.pairwise:
        warnings.append(
            "No pairwise decomposition: pyarrow is not installed where the release was built."
        )
    slots = records.shape.slots(ids_by_domain, release.seed)
    if "balance" in (release.filters or {}):
        meta.annotation["balance_report"] = filter_outputs.balance_report(
            verdicts, slots, ids_by_domain
        )
    members: list[tuple] = []  # see members.export_items
    done = 0
    step = max(1, total // 100)

    if bar is not None:
        bar.total = total

    last = 0.0

    def progress(n: int) -> None:
        nonlocal done, last
        done += n
        if settings.RELEASE_BUILD_ITEM_DELAY:  # fault tests: a build slow enough to kill
            time.sleep(settings.RELEASE_BUILD_ITEM_DELAY * n)
        if bar is not None:
            bar.update(n)
        # Every 1 %, but at most every PROGRESS_SECONDS: an UPDATE per 1 % was
        # ~5 % of a 5,211-item build, for a page that polls every few seconds.
        if (done % step == 0 and time.monotonic() - last >= PROGRESS_SECONDS) or done == total:
            last = time.monotonic()
            # (never into a release another attempt has finished meanwhile)
            beat.report(progress_done=done)

    def ordered_rows():
        # Plain rows, not model instances: building four instances per item
        # (verdict, item, domain, image) was a third of the build's CPU time.
        rows = verdicts.order_by(
            "item__domain__position", "item__domain__slug", "item__external_id"
        ).values_list(*ROW_FIELDS, named=True)
        if not salt:
            yield from rows.iterator(chunk_size=CHUNK)
            return
        # Re-keyed: in the order of the new IDs (the old order would show
        # what the old IDs sort by), CHUNK IDs per query.
        for d in domains:
            old = in_new_id_order(old_by_domain[d.slug], released.__getitem__)
            for start in range(0, len(old), CHUNK):
                part = old[start : start + CHUNK]
                got = {r.item__external_id: r for r in rows.filter(item__external_id__in=part)}
                yield from (got[ext_id] for ext_id in part)

    def chunk_items(chunk):
        # The chunk's content from its parts: one query (curation.releases.content).
        contents = item_contents(v.item_id for v in chunk)
        fetched.update(_fetch_images(contents.values(), folder.parent / ".images", fetched))
        yield from export_items(
            chunk, contents, pseudonyms, members, slots, records.shape, released, vote_extras
        )

    def items():
        chunk: list = []
        for verdict in ordered_rows():
            chunk.append(verdict)
            if len(chunk) == CHUNK:
                yield from chunk_items(chunk)
                chunk = []
        if chunk:
            yield from chunk_items(chunk)

    # Images already downloaded from a storage without local paths, by SHA-256.
    fetched: dict[str, Path] = {}

    def copy_image(item: exporter.ExportItem, destination: Path) -> None:
        if item.image_sha256 in fetched:
            os.link(fetched[item.image_sha256], destination)  # one work folder
        else:
            _copy_image(item, destination)

    # parquet/<domain>.parquet, images embedded (Hugging Face `datasets` layout),
    # where pyarrow is installed (the `parquet` extra: the Docker image and
    # `.[dev]` have it; a lean `make run` does not, 170 MB).
    # trl/<domain>.parquet too: conversational rows for TRL (curation.releases.trl).
    writers: list[parquet.ParquetWriter | trl.TrlWriter] = (
        [
            parquet.ParquetWriter(folder, domains=list(ids_by_domain)),
            trl.TrlWriter(folder, domains=list(ids_by_domain)),
        ]
        if parquet.available()
        else []
    )
    try:
        manifest = exporter.write_release(
            folder,
            items(),
            meta=meta,
            shape=records.shape,
            ids_by_domain=ids_by_domain,
            copy_image=copy_image,
            progress=progress,
            extra_writers=writers,  # closed by write_release
            extra_provenance=chain.from_iterable(
                part.extra_provenance(members) for part in parts if part.extra_provenance
            ),
            filter_provenance=left_out,
        )
    except BaseException:
        for writer in writers:
            writer.abort()  # release the open file; the folder is discarded
        raise
    # Each member's frozen ranking (ReleaseItem.ranks; "" unless decomposed).
    ranks = decomposed.ranks if decomposed is not None else {}
    members = [(*m, ranks.get(m[0], "")) for m in members]
    return manifest, members, warnings


def _fetch_images(contents, cache: Path, fetched: dict[str, Path]) -> dict[str, Path]:
    """Download a chunk's images from a storage without local paths (a
    bucket), TRANSFER_THREADS at a time, into `cache` (in the work folder);
    one request after another was most of a build's time there. Returns the
    new ones by SHA-256; nothing on a local storage."""
    if local_path(default_storage) is not None:
        return {}
    wanted = {
        c.image_sha256: c.image_file
        for c in contents
        if c.image_sha256 is not None and c.image_sha256 not in fetched
    }
    cache.mkdir(exist_ok=True)

    def fetch(sha: str) -> tuple[str, Path]:
        name = wanted[sha]
        target = cache / f"{sha}.{name.rsplit('.', 1)[-1]}"
        stream = open_stored(default_storage, name)
        try:
            with target.open("wb") as out:
                shutil.copyfileobj(stream, out, 1 << 20)
        finally:
            stream.close()
        return sha, target

    threads = publishing.TRANSFER_THREADS
    with ThreadPoolExecutor(threads, thread_name_prefix="release-images") as pool:
        return dict(pool.map(fetch, sorted(wanted)))


def _copy_image(item: exporter.ExportItem, destination: Path) -> None:
    """Put the item's image at destination: a hard link to the storage's file
    when both are on one local file system, else a copy.

    A link is safe because neither side is ever rewritten in place: a stored
    image is named by its SHA-256 (the storage only ever adds or deletes
    files) and a published release is immutable; deleting either name leaves
    the other intact. It spares creating a file per image, which dominated
    the build on a busy disk (0.6-3 s of a 5,211-image build, 0.05 s linked),
    and the disk space of a second copy of every image."""
    try:
        source = default_storage.path(item.image_source)
    except NotImplementedError:  # a remote storage: stream it
        with default_storage.open(item.image_source, "rb") as src, destination.open("wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        return
    try:
        os.link(source, destination)
    except OSError:  # another file system, or one without hard links
        shutil.copyfile(source, destination)  # the kernel copies (copy_file_range)


def _publish(release, folder, archive, sha, manifest, members, warnings) -> None:
    # On object storage this uploads and verifies everything under a staging
    # prefix first (curation/releases/publishing.py); nothing is final yet.
    target = publishing.target_for(
        slug=release.project.slug,
        version=release.version,
        pk=release.pk,
        folder=folder,
        archive=archive,
        sha256=sha,
    )
    published = False
    try:
        _record_and_publish(release, target, archive, sha, manifest, members, warnings)
        published = True
    except BaseException:
        # Remove copied files only if the ready row surely did not commit:
        # deleting a ready release's files would be far worse than leaving
        # unrecorded ones, which the next attempt clears anyway.
        try:
            published = Release.objects.filter(pk=release.pk, status=ReleaseStatus.READY).exists()
        except Exception:
            published = True
        raise
    finally:
        target.discard(published=published)


def _record_and_publish(release, target, archive, sha, manifest, members, warnings) -> None:
    with transaction.atomic():
        # An attempt overtaken by a retry that finished first must not replace
        # the files the ready release's checksum describes. The row lock
        # serialises two attempts that both reach this point (a redelivered
        # build took over one that was slow, not dead): the second sees ready.
        if not (
            Release.objects.select_for_update()
            .filter(pk=release.pk, status=ReleaseStatus.BUILDING)
            .exists()
        ):
            raise ReleaseError("the release changed state while it was being built")
        # Leftovers of an earlier attempt that died after publishing files but
        # before recording them (the release was not ready, so nobody saw them).
        target.clear_leftovers()
        ReleaseItem.objects.filter(release=release).delete()
        for start in range(0, len(members), 2000):  # instances of one batch at a time
            ReleaseItem.objects.bulk_create(
                [
                    ReleaseItem(
                        release_id=release.pk,
                        **dict(zip((*MEMBER_FIELDS, "ranks"), member, strict=True)),
                    )
                    for member in members[start : start + 2000]
                ]
            )
        freeze_group_keys(release)
        updated = Release.objects.filter(pk=release.pk, status=ReleaseStatus.BUILDING).update(
            status=ReleaseStatus.READY,
            sha256=sha,
            folder=target.folder_name,
            archive=target.archive_name,
            size_bytes=archive.stat().st_size,
            manifest=manifest,
            counts=manifest["counts"],
            warnings=warnings,
            progress_done=manifest["total"],
            progress_total=manifest["total"],
            finished_at=timezone.now(),
        )
        if not updated:
            raise ReleaseError("the release changed state while it was being built")
        # Published last, inside the transaction: a database error before
        # this point leaves the release failed with nothing published (a
        # rename locally; copies out of the staging prefix on object storage).
        target.publish()
