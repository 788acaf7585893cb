"""A stored, content-addressed file sent to a browser or an API client once
the caller checked who may have it: whole, or the one byte range a player
asks for (issue 35), with the safety and caching headers every stored file
gets. Used by the media view and by the API's file endpoints."""

from __future__ import annotations

import re
from pathlib import Path

from django.core.files.storage import default_storage
from django.http import FileResponse, Http404, HttpResponse, StreamingHttpResponse

from common.storage import open_stored, open_stored_range

_RANGE = re.compile(r"\Abytes=(\d*)-(\d*)\Z")
RANGE_CHUNK = 64 * 1024


def stored_file_response(request, name: str, content_type: str, *, csp: str = ""):
    """The stored file `name` (its stem is its SHA-256: a strong ETag) as
    `content_type`: 206 with the range asked for (a multi-range request gets
    its first range; If-Range honoured by ETag), 416 outside the file, else
    the whole file. Raises Http404 if it is not stored."""
    ranged = request.headers.get("Range")
    if ranged and _if_range_holds(request, name):
        response = _range_response(name, ranged, content_type)
    else:
        try:
            stream = open_stored(default_storage, name)
        except FileNotFoundError:
            raise Http404("No such file") from None
        response = FileResponse(stream, content_type=content_type)
    return _safe(response, name, csp or "sandbox; default-src 'none'")


def _safe(response, name: str, csp: str):
    response["Accept-Ranges"] = "bytes"
    response["Cache-Control"] = "private, max-age=31536000, immutable"
    response["ETag"] = f'"{Path(name).stem}"'
    # Even if a browser sniffed past the content type, the file is a sandboxed
    # document that may load nothing and run nothing.
    response["Content-Security-Policy"] = csp
    response["X-Content-Type-Options"] = "nosniff"
    return response


def _if_range_holds(request, name: str) -> bool:
    """A Range with If-Range is honoured only if the validator is this file's
    (its ETag; a date is never strong enough here): else the whole file."""
    validator = request.headers.get("If-Range")
    return validator is None or validator == f'"{Path(name).stem}"'


def _range_response(name: str, header: str, content_type: str):
    try:
        size = default_storage.size(name)
    except (FileNotFoundError, OSError):
        raise Http404("No such file") from None
    match = _RANGE.match(header.split(",", 1)[0].strip())
    if match is None or match.groups() == ("", ""):
        # Not a byte range this server understands: the whole file (RFC 9110 14.2).
        return FileResponse(open_stored(default_storage, name), content_type=content_type)
    first, last = match.groups()
    if first == "":  # the last N bytes
        start, end = max(0, size - int(last)), size - 1
    else:
        start = int(first)
        end = min(int(last), size - 1) if last else size - 1
    if start >= size or start > end:
        response = HttpResponse(status=416)
        response["Content-Range"] = f"bytes */{size}"
        return response

    def chunks():
        with open_stored_range(default_storage, name, start, end) as stream:
            left = end - start + 1
            while left > 0:
                data = stream.read(min(RANGE_CHUNK, left))
                if not data:
                    break
                left -= len(data)
                yield data

    response = StreamingHttpResponse(chunks(), status=206, content_type=content_type)
    response["Content-Range"] = f"bytes {start}-{end}/{size}"
    response["Content-Length"] = str(end - start + 1)
    return response
