"""Releases (README step 9): cut one, wait for its build, download and unzip it."""

from __future__ import annotations

import hashlib
import re
import time
import zipfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from triplet_client.errors import ChecksumMismatch, ReleaseFailed, StudioError, WaitTimeout
from triplet_client.models import Project, Release
from triplet_client.transport import ByteProgress, Resource, Transport, id_of, slug_of


def _project_slug(project: str | Project) -> str:
    return project if isinstance(project, str) else project.slug


def _ids(objects: Sequence[int | Any] | None) -> list[int] | None:
    """Evaluations or judge runs given by id or as objects."""
    return None if objects is None else [o if isinstance(o, int) else o.id for o in objects]


class ReleasesApi(Resource):
    def create_release(
        self,
        project: str | Project,
        version: str,
        *,
        notes: str = "",
        domains: Sequence[str] | None = None,
        seed: int | None = None,
        min_label_quality: float | None = None,
        rekey: bool = False,
        pairwise: str = "",
        too_easy: Sequence[int | Any] | None = None,
        too_easy_judge_runs: Sequence[int | Any] | None = None,
        too_easy_action: str | None = None,
        low_consensus: float | None = None,
        low_consensus_action: str | None = None,
        disagreement: Sequence[int | Any] | None = None,
        disagreement_judge_runs: Sequence[int | Any] | None = None,
        disagreement_human: float | None = None,
        disagreement_share: float | None = None,
        disagreement_action: str | None = None,
        balance_report: bool = False,
        balance_tolerance: float | None = None,
    ) -> Release:
        """Cut a release (curators): recorded now, built in the background
        (wait_for_release). Agreed and resolved items of `domains` (all by
        default); BadRequest `nothing_to_release` when there are none.

        Benchmark-construction filters (each pair's fate in the manifest's
        `release_filters`, read back as `Release.filter_report`), each with an
        action `drop` or `hold` (kept aside in held_out/):
        `too_easy`: evaluations (or `too_easy_judge_runs`: project judge runs)
        that all got a pair right in both orders; `low_consensus`: human
        consensus below this share; `disagreement`: evaluations (and
        `disagreement_judge_runs`) whose majority, of at least
        `disagreement_share`, contradicts a human consensus of at least
        `disagreement_human`. `balance_tolerance`: drop the fewest pairs so
        each domain's chosen-longer share is within it of 0.5;
        `balance_report`: report side and length balance
        (`Release.balance_report`). `pairwise`: best or all also writes
        ranked and best-of-N items as TRL pairs."""
        body: dict[str, Any] = {"version": version, "notes": notes, "rekey": rekey}
        optional = {
            "domains": None if domains is None else list(domains),
            "seed": seed,
            "min_label_quality": min_label_quality,
            "pairwise": pairwise or None,
            "too_easy_ensemble": _ids(too_easy),
            "too_easy_judge_runs": _ids(too_easy_judge_runs),
            "too_easy_action": too_easy_action,
            "low_consensus": low_consensus,
            "low_consensus_action": low_consensus_action,
            "disagreement_ensemble": _ids(disagreement),
            "disagreement_judge_runs": _ids(disagreement_judge_runs),
            "disagreement_human": disagreement_human,
            "disagreement_share": disagreement_share,
            "disagreement_action": disagreement_action,
            "balance_report": balance_report or None,
            "balance_tolerance": balance_tolerance,
        }
        body.update({k: v for k, v in optional.items() if v is not None})
        answer = self._t.json("POST", f"projects/{slug_of(project)}/releases/", json=body)
        return Release.from_api(answer, _project_slug(project))

    def release(self, project: str | Project, release: int | Release) -> Release:
        answer = self._t.json("GET", f"projects/{slug_of(project)}/releases/{id_of(release)}/")
        return Release.from_api(answer, _project_slug(project))

    def retry_release(self, project: str | Project, release: int | Release) -> Release:
        """Build a failed or stalled release again from scratch (audited)."""
        path = f"projects/{slug_of(project)}/releases/{id_of(release)}/retry/"
        return Release.from_api(self._t.json("POST", path), _project_slug(project))

    def release_id_map(self, project: str | Project, release: int | Release) -> dict[str, str]:
        """A re-keyed release's IDs: the studio's external_id -> the released ID."""
        path = f"projects/{slug_of(project)}/releases/{id_of(release)}/ids/"
        return {row["external_id"]: row["released_id"] for row in self._t.pages(path)}

    def releases(self, project: str | Project) -> Iterator[Release]:
        """The project's releases, newest first."""
        for row in self._t.pages(f"projects/{slug_of(project)}/releases/"):
            yield Release.from_api(row, _project_slug(project))

    def wait_for_release(
        self,
        project: str | Project,
        release: int | Release,
        *,
        on_progress: Callable[[Release], None] | None = None,
        poll_seconds: float = 1.0,
        timeout: float | None = None,
    ) -> Release:
        """Poll until the build is ready (returned) or failed (ReleaseFailed
        with the server's reason); `on_progress(release)` sees each change
        of status or progress; WaitTimeout after `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        seen = None
        while True:
            current = self.release(project, release)
            state = (current.status, current.progress)
            if on_progress is not None and state != seen:
                on_progress(current)
            seen = state
            if current.status == "ready":
                return current
            if current.status == "failed":
                raise ReleaseFailed(current)
            if deadline is not None and time.monotonic() >= deadline:
                raise WaitTimeout(
                    f"Release {current.version} still {current.status} after {timeout} s "
                    f"({current.progress.done}/{current.progress.total})."
                )
            time.sleep(poll_seconds)

    def download_release(
        self,
        project: str | Project,
        release: int | Release,
        folder: str | Path,
        *,
        unzip: bool = True,
        on_progress: ByteProgress | None = None,
    ) -> Path:
        """Download a ready release's zip into `folder`, check its SHA-256
        against the server's, and (unzip=True) unpack it there. Returns the
        release's folder (or the zip with unzip=False)."""
        path = f"projects/{slug_of(project)}/releases/{id_of(release)}/download/"
        stem = f"release-{id_of(release)}"
        return download_checked_zip(self._t, path, Path(folder), stem, unzip, on_progress)


def download_checked_zip(
    transport: Transport,
    path: str,
    folder: Path,
    stem: str,
    unzip: bool,
    on_progress: ByteProgress | None,
) -> Path:
    """Download a zip into `folder` (as `.<stem>.zip.part` until complete),
    check its SHA-256 against the server's `X-Content-SHA256`, name it as
    the server says (else `<stem>.zip`) and, with unzip, unpack it there.
    A release's and a mix's download."""
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f".{stem}.zip.part"
    try:
        headers = transport.download(path, partial, on_progress)
        expected = headers.get("X-Content-SHA256", "")
        actual = sha256_of(partial)
        if expected and actual != expected:
            raise ChecksumMismatch(f"Downloaded {actual}, the server announced {expected}.")
        disposition = headers.get("Content-Disposition", "")
        archive = folder / attachment_name(disposition, f"{stem}.zip")
        partial.replace(archive)
    finally:
        partial.unlink(missing_ok=True)
    return safe_unzip(archive, folder) if unzip else archive


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def attachment_name(disposition: str, fallback: str) -> str:
    """The zip's name from a Content-Disposition header (its last path part), else `fallback`."""
    match = re.search(r'filename="?([^";]+)"?', disposition)
    name = PurePosixPath(match.group(1)).name if match else ""
    return name if name.endswith(".zip") else fallback


def safe_unzip(archive: Path, folder: Path) -> Path:
    """Unpack a release zip (one top folder) into `folder`; refuses members
    that would land outside it and a top folder that already exists."""
    with zipfile.ZipFile(archive) as zf:
        names = zf.namelist()
        roots = {name.split("/", 1)[0] for name in names}
        for name in names:
            parts = PurePosixPath(name).parts
            if name.startswith(("/", "\\")) or ".." in parts or ":" in name:
                raise StudioError(f"{archive.name}: unsafe member {name!r}; not unpacked.")
        if len(roots) != 1:
            raise StudioError(f"{archive.name}: expected one top folder, found {sorted(roots)}.")
        root = folder / roots.pop()
        if root.exists():
            raise FileExistsError(f"{root} already exists; remove it or unzip elsewhere.")
        zf.extractall(folder)
    return root
