"""Files of a refused upload, kept on the server for a short time (issue 31),
so that fixing one option of the import page does not mean choosing both
files again.

Each staged set lives in ``DATA_DIR/import-staging/<user pk>/<token>/``
with a small ``staged.json`` naming its project and when it was made. A
token is found only by the user who staged it, for the same project, before
it expires; expired sets are removed whenever any set is staged or looked up
(cleaning on access: no task needed). A user holds at most
``MAX_STAGED_PER_USER`` sets, so the disk a user may fill is bounded by that
many uploads, each already capped by UPLOAD_MAX_BYTES.
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile

STAGED_SECONDS = 60 * 60
MAX_STAGED_PER_USER = 3
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{22}$")


@dataclass
class Staged:
    token: str
    folder: Path
    dataset: Path | None
    images: Path | None


def _root() -> Path:
    return Path(settings.DATA_DIR) / "import-staging"


def _user_folder(user) -> Path:
    return _root() / str(int(user.pk))


def _meta(folder: Path) -> dict | None:
    try:
        return json.loads((folder / "staged.json").read_text())
    except (OSError, ValueError):
        return None


def _expired(meta: dict | None, now: float) -> bool:
    return meta is None or now - float(meta.get("created", 0)) > STAGED_SECONDS


def sweep(now: float | None = None) -> int:
    """Remove every expired staged set; how many were removed."""
    now = time.time() if now is None else now
    removed = 0
    root = _root()
    if not root.is_dir():
        return 0
    for user_folder in root.iterdir():
        for folder in user_folder.iterdir() if user_folder.is_dir() else ():
            if _expired(_meta(folder), now):
                shutil.rmtree(folder, ignore_errors=True)
                removed += 1
    return removed


def _first_file(folder: Path) -> Path | None:
    files = sorted(folder.iterdir()) if folder.is_dir() else []
    return files[0] if files else None


def find(user, project, token: str) -> Staged | None:
    """The staged set of `token`, if this user staged it for this project and
    it has not expired."""
    sweep()
    if not token or not _TOKEN.match(token):
        return None
    folder = _user_folder(user) / token
    meta = _meta(folder)
    if meta is None or meta.get("project") != project.pk:
        return None
    return Staged(token, folder, _first_file(folder / "dataset"), _first_file(folder / "images"))


def stage(
    user,
    project,
    *,
    dataset: UploadedFile | None,
    images: UploadedFile | None,
    previous: Staged | None,
) -> Staged:
    """Keep the files of an attempt: new uploads replace the previous set's
    files of the same kind; the others are carried over."""
    sweep()
    token = secrets.token_urlsafe(16)
    folder = _user_folder(user) / token
    folder.mkdir(parents=True)
    paths: dict[str, Path | None] = {}
    for kind, upload in (("dataset", dataset), ("images", images)):
        kept = getattr(previous, kind) if previous else None
        target = folder / kind
        target.mkdir()
        if upload is not None:
            # Only the base name of the client's name is used.
            path = target / (Path(upload.name or "").name or "upload")
            with path.open("wb") as fh:
                for chunk in upload.chunks():
                    fh.write(chunk)
            paths[kind] = path
        elif kept is not None:
            paths[kind] = Path(shutil.move(kept, target / kept.name))
        else:
            paths[kind] = None
    (folder / "staged.json").write_text(json.dumps({"project": project.pk, "created": time.time()}))
    if previous is not None:
        discard(previous)
    _keep_newest(_user_folder(user))
    return Staged(token, folder, paths["dataset"], paths["images"])


def _keep_newest(user_folder: Path) -> None:
    sets = sorted(user_folder.iterdir(), key=lambda f: float((_meta(f) or {}).get("created", 0)))
    for folder in sets[:-MAX_STAGED_PER_USER]:
        shutil.rmtree(folder, ignore_errors=True)


def discard(staged: Staged) -> None:
    shutil.rmtree(staged.folder, ignore_errors=True)
