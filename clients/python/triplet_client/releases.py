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
from triplet_client.transport import ByteProgress, Resource, id_of, slug_of


def _project_slug(project: str | Project) -> str:
    return project if isinstance(project, str) else project.slug


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
    ) -> Release:
        """Cut a release (curators): recorded now, built in the background
        (wait_for_release). Agreed and resolved items of `domains` (all by
        default); BadRequest `nothing_to_release` when there are none."""
        body: dict[str, Any] = {"version": version, "notes": notes, "rekey": rekey}
        if domains is not None:
            body["domains"] = list(domains)
        if seed is not None:
            body["seed"] = seed
        if min_label_quality is not None:
            body["min_label_quality"] = min_label_quality
        answer = self._t.json("POST", f"projects/{slug_of(project)}/releases/", json=body)
        return Release.from_api(answer, _project_slug(project))

    def release(self, project: str | Project, release: int | Release) -> Release:
        answer = self._t.json("GET", f"projects/{slug_of(project)}/releases/{id_of(release)}/")
        return Release.from_api(answer, _project_slug(project))

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
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        path = f"projects/{slug_of(project)}/releases/{id_of(release)}/download/"
        partial = folder / f".release-{id_of(release)}.zip.part"
        try:
            headers = self._t.download(path, partial, on_progress)
            expected = headers.get("X-Content-SHA256", "")
            actual = _sha256(partial)
            if expected and actual != expected:
                raise ChecksumMismatch(f"Downloaded {actual}, the server announced {expected}.")
            archive = folder / _attachment_name(headers.get("Content-Disposition", ""), release)
            partial.replace(archive)
        finally:
            partial.unlink(missing_ok=True)
        return safe_unzip(archive, folder) if unzip else archive


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _attachment_name(disposition: str, release: int | Release) -> str:
    match = re.search(r'filename="?([^";]+)"?', disposition)
    name = PurePosixPath(match.group(1)).name if match else ""
    return name if name.endswith(".zip") else f"release-{id_of(release)}.zip"


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
