"""Training mixes (README "Mixes"): releases and projects mixed into one
dataset with filters, caps or weights and de-duplication, built in the
background, downloaded and checked like a release."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from triplet_client.errors import MixFailed
from triplet_client.models import Mix
from triplet_client.releases import download_checked_zip
from triplet_client.transport import ByteProgress, Resource, id_of
from triplet_client.waiting import poll_until


class MixesApi(Resource):
    def create_mix(
        self,
        name: str,
        version: str,
        sources: Sequence[Mapping[str, Any]],
        *,
        notes: str = "",
        statuses: Sequence[str] | None = None,
        provenances: Sequence[str] | None = None,
        min_share: float | None = None,
        domains: Sequence[str] | None = None,
        mode: str = "caps",
        size: int | None = None,
        dedup: bool = True,
        seed: int = 0,
    ) -> Mix:
        """Record a mix (curators of every source), built in the background
        (wait_for_mix). `sources`, in order (earlier ones win duplicates):
        {"project": slug, "release": version (omitted: the project's decided
        items), "cap": n, "weight": w}. `mode`: caps or weights (with `size`)."""
        body: dict[str, Any] = {
            "name": name,
            "version": version,
            "notes": notes,
            "sources": [dict(s) for s in sources],
            "mode": mode,
            "dedup": dedup,
            "seed": seed,
        }
        optional = {
            "statuses": statuses,
            "provenances": provenances,
            "min_share": min_share,
            "domains": domains,
            "size": size,
        }
        body.update({k: list(v) if isinstance(v, (list, tuple)) else v
                     for k, v in optional.items() if v is not None})  # fmt: skip
        return Mix.from_api(self._t.json("POST", "mixes/", json=body))

    def mixes(self) -> Iterator[Mix]:
        """Mixes you may see (you curate every source), newest first."""
        for row in self._t.pages("mixes/"):
            yield Mix.from_api(row)

    def mix(self, mix: int | Mix) -> Mix:
        return Mix.from_api(self._t.json("GET", f"mixes/{id_of(mix)}/"))

    def wait_for_mix(
        self,
        mix: int | Mix,
        *,
        on_progress: Callable[[Mix], None] | None = None,
        poll_seconds: float = 1.0,
        timeout: float | None = None,
    ) -> Mix:
        """Poll until the mix is ready (returned) or failed (MixFailed);
        `on_progress(mix)` sees each change; WaitTimeout after `timeout` s."""
        return poll_until(
            lambda: self.mix(mix),
            state=lambda m: (m.status, m.progress),
            done=lambda m: m.status == "ready",
            failure=lambda m: MixFailed(m) if m.status == "failed" else None,
            describe=lambda m: (
                f"Mix {m.name} {m.version} still {m.status} ({m.progress.done}/{m.progress.total})"
            ),
            on_progress=on_progress,
            poll_seconds=poll_seconds,
            timeout=timeout,
        )

    def download_mix(
        self,
        mix: int | Mix,
        folder: str | Path,
        *,
        unzip: bool = True,
        on_progress: ByteProgress | None = None,
    ) -> Path:
        """Download a ready mix's zip into `folder`, check its SHA-256, and
        (unzip=True) unpack it there. Returns its folder (or the zip)."""
        path, stem = f"mixes/{id_of(mix)}/download/", f"mix-{id_of(mix)}"
        return download_checked_zip(self._t, path, Path(folder), stem, unzip, on_progress)
