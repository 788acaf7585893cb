"""Typed exceptions. Every refusal of the API has one shape,

    {"error": {"code": "validation_error", "message": "...", "fields": {"choice": ["..."]}}}

(imports add `problems`), and becomes an ApiError subclass chosen by status
(and by code for a refused import), carrying `code`, `message`, `fields` and
the HTTP `status`."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from triplet_client.models import Mix, Release
    from triplet_client.quality_models import JudgeRun, LabelQuality


class StudioError(Exception):
    """Base of everything this client raises on purpose."""


@dataclass(frozen=True)
class ImportProblem:
    """One problem found in an imported file: where (file, line, record
    number, field), what, and how many records share it."""

    file: str
    message: str
    line: int | None = None
    index: int | None = None
    field: str | None = None
    count: int = 1
    records: list[int] = dataclasses.field(default_factory=list)

    def __str__(self) -> str:
        where = ", ".join(
            part
            for part in (
                self.file,
                f"line {self.line}" if self.line is not None else "",
                f"record {self.index}" if self.index is not None else "",
                f"field {self.field}" if self.field else "",
            )
            if part
        )
        more = f" ({self.count} records)" if self.count > 1 else ""
        return f"{where}: {self.message}{more}"


class ApiError(StudioError):
    """The server refused a request (4xx/5xx)."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        fields: Mapping[str, list[str]] | None = None,
        *,
        method: str = "",
        url: str = "",
    ) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.fields: dict[str, list[str]] = dict(fields or {})
        self.method = method
        self.url = url
        super().__init__(self._text())

    def _text(self) -> str:
        lines = [f"{self.status} {self.code}: {self.message}"]
        lines += [f"  {name}: {' '.join(msgs)}" for name, msgs in self.fields.items()]
        return "\n".join(lines)


class BadRequest(ApiError):
    """400: invalid fields (`fields` says which) or a rule the server enforces."""


class ImportFailed(BadRequest):
    """400 `import_failed`: nothing was written; `problems` lists every problem."""

    def __init__(self, *args: Any, problems: list[ImportProblem], **kwargs: Any) -> None:
        self.problems = problems
        super().__init__(*args, **kwargs)

    def _text(self) -> str:
        return "\n".join(
            [f"{self.status} {self.code}: {self.message}"] + [f"  {p}" for p in self.problems]
        )


class NotAuthenticated(ApiError):
    """401: no token, or a revoked one (create one on the API token page)."""


class PermissionDenied(ApiError):
    """403: your role in the project does not allow this."""


class NotFound(ApiError):
    """404: no such object, or you are not a member of its project."""


class Conflict(ApiError):
    """409: the current state refuses the request (e.g. `stale`, `exists`, `not_ready`)."""


class PayloadTooLarge(ApiError):
    """413: the upload is larger than the server accepts."""


class ServerError(ApiError):
    """5xx: the server failed (it has been logged there)."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: NotAuthenticated,
    403: PermissionDenied,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
}


def error_from_response(status: int, body: Any, text: str, *, method: str, url: str) -> ApiError:
    """The exception for an error response; a body that is not the API's
    format (a proxy's HTML page) keeps its first characters as the message."""
    error = body.get("error") if isinstance(body, dict) else None
    fields: dict[str, list[str]]
    problems: list[dict[str, Any]] | None
    if not isinstance(error, dict):
        code, message, fields, problems = f"http_{status}", text.strip()[:500], {}, None
    else:
        code = str(error.get("code", f"http_{status}"))
        message = str(error.get("message", ""))
        fields = error.get("fields") or {}
        problems = error.get("problems")
    where = {"method": method, "url": url}
    if problems is not None:
        found = [
            ImportProblem(
                file=str(p.get("file", "")),
                message=str(p.get("message", "")),
                line=p.get("line"),
                index=p.get("index"),
                field=p.get("field"),
                count=int(p.get("count") or 1),
                records=list(p.get("records") or []),
            )
            for p in problems
        ]
        return ImportFailed(status, code, message, fields, problems=found, **where)
    cls = _BY_STATUS.get(status, ServerError if status >= 500 else ApiError)
    return cls(status, code, message, fields, **where)


class ReleaseFailed(StudioError):
    """The release's build failed; `release.error` says why."""

    def __init__(self, release: Release) -> None:
        self.release = release
        super().__init__(f"Release {release.version} failed: {release.error}")


class JudgeRunFailed(StudioError):
    """A judge run ended failed or cancelled; `run.error` says why."""

    def __init__(self, run: JudgeRun) -> None:
        self.run = run
        super().__init__(f"Judge run {run.name!r} {run.status}: {run.error or 'no reason given'}")


class MixFailed(StudioError):
    """A mix's build failed; `mix.error` says why."""

    def __init__(self, mix: Mix) -> None:
        self.mix = mix
        super().__init__(f"Mix {mix.name} {mix.version} failed: {mix.error}")


class LabelQualityFailed(StudioError):
    """The label-quality computation failed; `analysis.error` says why."""

    def __init__(self, analysis: LabelQuality) -> None:
        self.analysis = analysis
        super().__init__(f"Label quality failed: {analysis.error}")


class WaitTimeout(StudioError):
    """Waiting for the server (a build, a run, a computation) took longer than allowed."""


class ChecksumMismatch(StudioError):
    """A downloaded file's SHA-256 differs from the one the server announced."""


class MissingExtra(StudioError, ImportError):
    """An optional dependency (pandas, datasets) is not installed."""
