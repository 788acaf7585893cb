"""HTTP to /api/v1/ with httpx: the token header, errors raised as typed
exceptions, every page of a list, uploads that report their progress."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, BinaryIO, Union, cast
from urllib.parse import quote

import httpx

from triplet_client.errors import StudioError, error_from_response

# A file to upload: a path, or (file name, bytes or an open binary file).
Upload = Union[str, "os.PathLike[str]", tuple[str, bytes | BinaryIO]]
# Called with (bytes sent or received so far, total bytes or None).
ByteProgress = Callable[[int, "int | None"], None]

PAGE_SIZE = 200  # the API's largest page
USER_AGENT = "triplet-studio-client/0.1"


def segment(value: str | int) -> str:
    """One path segment (a slug or an id), quoted."""
    return quote(str(value), safe="")


class Transport:
    def __init__(
        self,
        url: str,
        token: str,
        *,
        timeout: float,
        upload_timeout: float | None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.upload_timeout = upload_timeout
        self.http = httpx.Client(
            base_url=url.rstrip("/") + "/api/v1/",
            headers={
                "Authorization": f"Token {token}",
                "Accept": "application/json",
                "User-Agent": USER_AGENT,
            },
            timeout=timeout,
            transport=transport,
        )

    def close(self) -> None:
        self.http.close()

    def send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """The answer to one request; an error answer is raised as ApiError."""
        response = self.http.request(method, path, **kwargs)
        raise_for_error(response)
        return response

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.send(method, path, **kwargs)
        return response.json() if response.content else None

    def pages(self, path: str, params: Mapping[str, Any] | None = None) -> Iterator[Any]:
        """Every result of a paginated list, page after page (lazily).
        Pages are asked for by number: the server's absolute `next` links
        may name a host the client cannot reach (behind a proxy)."""
        query = {k: v for k, v in (params or {}).items() if v is not None}
        page = 1
        while True:
            body = self.json("GET", path, params={**query, "page": page, "page_size": PAGE_SIZE})
            yield from body["results"]
            if not body.get("next"):
                return
            page += 1

    def relative(self, url: str) -> str:
        """A URL the API gave (a path such as /api/v1/assignments/…, or an
        absolute URL on this server) as a path under /api/v1/; the token is
        never sent to another host."""
        given = httpx.URL(url)
        base = self.http.base_url
        if given.is_absolute_url and (given.scheme, given.host, given.port) != (
            base.scheme,
            base.host,
            base.port,
        ):
            raise StudioError(f"{url} is not on this server ({base}); not fetched.")
        if not given.path.startswith(base.path):
            raise StudioError(f"{url} is not under {base.path}; not fetched.")
        rest = given.path[len(base.path) :]
        return f"{rest}?{given.query.decode()}" if given.query else rest

    def upload(
        self,
        path: str,
        files: Mapping[str, Upload | None],
        data: Mapping[str, Any],
        on_progress: ByteProgress | None = None,
    ) -> Any:
        """A multipart POST of `files` (None ones left out) and form `data`
        (None left out; booleans as true/false), reporting bytes read."""
        opened: list[IO[bytes]] = []
        try:
            parts: dict[str, tuple[str, IO[bytes]]] = {}
            for name, upload in files.items():
                if upload is None:
                    continue
                filename, stream = open_upload(upload)
                given = upload[1] if isinstance(upload, tuple) else None
                if stream is not given:  # (an open file the caller gave stays open)
                    opened.append(stream)
                parts[name] = (filename, stream)
            if on_progress is not None:
                counter = _Counter(on_progress, sum(_size(s) for _, s in parts.values()))
                parts = {
                    k: (n, cast(IO[bytes], _Counted(s, counter))) for k, (n, s) in parts.items()
                }
            form = {k: _form_value(v) for k, v in data.items() if v is not None}
            return self.json("POST", path, files=parts, data=form, timeout=self.upload_timeout)
        finally:
            for stream in opened:
                stream.close()

    def download(self, path: str, target: Path, on_progress: ByteProgress | None) -> httpx.Headers:
        """Stream a file to `target`; its headers."""
        with self.http.stream("GET", path, timeout=self.upload_timeout) as response:
            if response.is_error:
                response.read()
                raise_for_error(response)
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
            done = 0
            with open(target, "wb") as out:
                for chunk in response.iter_bytes(1 << 20):
                    out.write(chunk)
                    done += len(chunk)
                    if on_progress is not None:
                        on_progress(done, total)
            return response.headers


def raise_for_error(response: httpx.Response) -> None:
    if not response.is_error:
        return
    try:
        body = response.json()
    except ValueError:
        body = None
    raise error_from_response(
        response.status_code,
        body,
        response.text,
        method=response.request.method,
        url=str(response.request.url),
    )


def open_upload(upload: Upload) -> tuple[str, IO[bytes]]:
    """(file name, an open binary stream) of an Upload: the file given, or
    one opened on a path or bytes (which the caller closes)."""
    if isinstance(upload, tuple):
        name, content = upload
        if isinstance(content, bytes):
            import io

            return name, io.BytesIO(content)
        return name, content
    path = Path(upload)
    return path.name, open(path, "rb")


def _size(stream: IO[bytes]) -> int:
    here = stream.tell()
    end = stream.seek(0, os.SEEK_END)
    stream.seek(here)
    return end - here


def _form_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class _Counter:
    def __init__(self, report: ByteProgress, total: int) -> None:
        self.report, self.total, self.done = report, total, 0

    def add(self, n: int) -> None:
        self.done += n
        self.report(min(self.done, self.total), self.total)


class _Counted:
    """A binary stream that counts what httpx reads of it (multipart
    uploads are read in chunks as they are sent)."""

    def __init__(self, stream: IO[bytes], counter: _Counter) -> None:
        self.stream, self.counter = stream, counter

    def read(self, size: int = -1) -> bytes:
        chunk = self.stream.read(size)
        self.counter.add(len(chunk))
        return chunk

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return self.stream.seek(offset, whence)

    def tell(self) -> int:
        return self.stream.tell()


class Resource:
    """What each area of the client (projects.py, releases.py, …) builds on."""

    _t: Transport


def slug_of(project: str | Any) -> str:
    """A project given by slug or as a Project."""
    return segment(project if isinstance(project, str) else project.slug)


def id_of(obj: int | Any) -> str:
    """A release, evaluation or assignment given by id or as the object."""
    return segment(obj if isinstance(obj, int) else obj.id)
