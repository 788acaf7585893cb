"""The client: one object with every area's methods."""

from __future__ import annotations

import os
from types import TracebackType

import httpx

from triplet_client.annotation import AnnotationApi
from triplet_client.curation import CurationApi
from triplet_client.errors import StudioError
from triplet_client.evaluations import EvaluationsApi
from triplet_client.exports import ExportsApi
from triplet_client.gates import GatesApi
from triplet_client.imports import ImportsApi
from triplet_client.judges import JudgesApi
from triplet_client.mixes import MixesApi
from triplet_client.projects import ProjectsApi
from triplet_client.quality import QualityApi
from triplet_client.releases import ReleasesApi
from triplet_client.team import TeamApi
from triplet_client.transport import Transport


class Client(
    ProjectsApi,
    TeamApi,
    ImportsApi,
    AnnotationApi,
    CurationApi,
    ExportsApi,
    ReleasesApi,
    EvaluationsApi,
    JudgesApi,
    GatesApi,
    QualityApi,
    MixesApi,
):
    """Triplet Studio's REST API (/api/v1/) from Python.

        studio = Client("http://127.0.0.1:8000", token="…")

    `url` and `token` default to the environment variables TRIPLET_STUDIO_URL
    and TRIPLET_STUDIO_TOKEN (create a token on the studio's **API token**
    page). `timeout` bounds ordinary requests; `upload_timeout` (None: no
    limit) the imports, evaluations, exports and downloads. Refusals raise
    ApiError subclasses; lists are iterators over every page."""

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = 60.0,
        upload_timeout: float | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        url = url or os.environ.get("TRIPLET_STUDIO_URL", "")
        token = token or os.environ.get("TRIPLET_STUDIO_TOKEN", "")
        if not url:
            raise StudioError("Give the studio's url (or set TRIPLET_STUDIO_URL).")
        if not token:
            raise StudioError(
                "Give an API token (or set TRIPLET_STUDIO_TOKEN): create one on the "
                "studio's API token page (/account/token/)."
            )
        self.url = url.rstrip("/")
        self._t = Transport(
            self.url, token, timeout=timeout, upload_timeout=upload_timeout, transport=transport
        )

    def close(self) -> None:
        self._t.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client({self.url!r})"
