"""Reading a dataset file record by record: a memory-mapped file, the JSON
array and JSONL scanners, UTF-8 checks.
"""

from __future__ import annotations

import codecs
import json
import mmap
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from annotate.importing.records import ProblemLog

# --- Dataset parsing ----------------------------------------------------------------


# Pages of a mapped dataset file the reader has passed are given back in steps
# of this many bytes (MADV_DONTNEED: the kernel keeps them in its page cache,
# the process no longer counts them), so an import's resident memory grows
# with the largest record, not with the file.
_RELEASE_STEP = 16 * 1024 * 1024


class DatasetFile(mmap.mmap):
    """A dataset file mapped read-only: the parser reads it like bytes
    (slices, regular expressions, find) while the file stays on disk.

    The readers call :meth:`release` as they move on, and the whole-range
    scans (`count`, `rfind`) give back what they read, so the resident part
    of the file stays within a few `_RELEASE_STEP`s whatever its size.
    Re-reading a given-back page is correct (it is read again from the page
    cache or the disk), only slower."""

    _mark = 0

    def startswith(self, prefix: bytes) -> bool:
        return self[: len(prefix)] == prefix

    def release(self, pos: int) -> None:
        """The reader is at `pos` and will not look before it again (a new
        pass starts again from 0)."""
        if pos < self._mark:
            self._mark = 0
        if pos - self._mark >= _RELEASE_STEP:
            self._drop(self._mark, pos)
            self._mark = pos - pos % mmap.PAGESIZE

    def _drop(self, start: int, end: int) -> None:
        start -= start % mmap.PAGESIZE
        end -= end % mmap.PAGESIZE
        if end > start:
            self.madvise(mmap.MADV_DONTNEED, start, end - start)

    def count(self, sub: bytes, start: int = 0, end: int | None = None) -> int:
        end = len(self) if end is None else min(end, len(self))
        if len(sub) != 1:
            raise ValueError("DatasetFile.count counts single bytes")
        total = 0
        for offset in range(start, end, _RELEASE_STEP):
            stop = min(end, offset + _RELEASE_STEP)
            total += self[offset:stop].count(sub)
            if end - start > _RELEASE_STEP:
                self._drop(offset, stop)
        return total

    def rfind(self, sub: bytes, start: int = 0, end: int | None = None) -> int:
        end = len(self) if end is None else min(end, len(self))
        if len(sub) != 1:
            raise ValueError("DatasetFile.rfind finds single bytes")
        while end > start:
            offset = max(start, end - _RELEASE_STEP)
            found = self[offset:end].rfind(sub)
            if found != -1:
                return offset + found
            self._drop(offset, end)
            end = offset
        return -1


@contextmanager
def open_dataset_file(path: Path) -> Iterator[DatasetFile | bytes]:
    """The dataset file at `path`, mapped (an empty file is just b"")."""
    with path.open("rb") as fh:
        if os.fstat(fh.fileno()).st_size == 0:
            yield b""
            return
        mapped = DatasetFile(fh.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            yield mapped
        finally:
            mapped.close()


def _release(data: bytes | DatasetFile, pos: int) -> None:
    if isinstance(data, DatasetFile):
        data.release(pos)


# Whitespace between JSON tokens, as bytes; U+FEFF (a stray byte-order mark)
# counts as whitespace, as it always has here. Possessive: a plain `(?:a|b)*`
# keeps a backtracking mark per character, about 120 bytes for each byte of
# whitespace (8 MB of blanks between two records cost 960 MB).
_WS = re.compile(rb"(?:[ \t\r\n]++|\xef\xbb\xbf)*+")
_BOM = b"\xef\xbb\xbf"
# The rest of a JSON string after its opening quote, up to its closing one
# (possessive: linear, never backtracks).
_STRING_REST = re.compile(rb'(?:[^"\\]++|\\.)*+"', re.S)
_STRUCTURE = re.compile(rb'["\[\]{}]')
_SCALAR = re.compile(rb"[^,\]\s]*")
_UTF8_CHUNK = 1 << 20
# The first window a record is decoded from (grown 4x until the record fits):
# about the size of a typical record, so small records cost one small decode.
_FIRST_WINDOW = 8 * 1024


def _scan_value(data: bytes | DatasetFile, pos: int, limit: int) -> int | None:
    """The end of the JSON value starting at `pos`, found without decoding
    it: brackets counted outside strings. None when it does not end within
    `limit` bytes (or before the end of the data: a truncated file)."""
    stop = min(len(data), pos + limit)
    first = data[pos : pos + 1]
    if first == b'"':
        m = _STRING_REST.match(data, pos + 1, stop)
        return m.end() if m else None
    if first not in (b"[", b"{"):
        return _SCALAR.match(data, pos, stop).end()
    depth = 0
    while True:
        m = _STRUCTURE.search(data, pos, stop)
        if m is None:
            return None
        char = data[m.start()]
        if char == 0x22:  # '"'
            m = _STRING_REST.match(data, m.end(), stop)
            if m is None:
                return None
            pos = m.end()
            continue
        pos = m.end()
        if char in (0x5B, 0x7B):  # '[', '{'
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return pos


def _decode_value(
    data: bytes | DatasetFile, pos: int, limit: int, decoder: json.JSONDecoder
) -> tuple[Any, int] | None:
    """(value, end) of the JSON value starting at `pos`, decoded by the C
    decoder from a window of the data that grows until the value fits; None
    when it does not end within `limit` bytes. A syntax error is raised as
    decoding exactly the value's bytes raises it (positions relative to
    `pos`), the whole-file decoder's error at the same place."""
    n = len(data)
    if data[pos : pos + 1] in (b"[", b"{", b'"'):
        window = _FIRST_WINDOW
        while True:
            stop = min(n, pos + min(window, limit + 1))
            while stop < n and data[stop] & 0xC0 == 0x80:  # a character boundary
                stop -= 1
            chunk = data[pos:stop].decode("utf-8")
            try:
                value, used = decoder.raw_decode(chunk, 0)
            except (ValueError, RecursionError):
                if stop >= n or window > limit:
                    break  # a real error, or too large: the exact slice tells
                window *= 4
                continue
            # A container or string that decoded is complete, window or not.
            return value, pos + len(chunk[:used].encode()) if used < len(chunk) else stop
    end = _scan_value(data, pos, limit + 1)
    if end is None and pos + limit < n:
        return None
    stop = n if end is None else end
    chunk = data[pos:stop].decode("utf-8")
    value, used = decoder.raw_decode(chunk, 0)  # raises the value's own error
    # Where the decoder stopped ("1x" is the number 1, then an "x"), in bytes.
    return value, stop if used == len(chunk) else pos + len(chunk[:used].encode())


def _skip_ws(data: bytes | DatasetFile, pos: int) -> int:
    return _WS.match(data, pos).end()


def _line_of(data: bytes | DatasetFile, pos: int) -> int:
    return data.count(b"\n", 0, pos) + 1


def _char_at(data: bytes | DatasetFile, pos: int) -> str:
    return data[pos : pos + 4].decode("utf-8", "ignore")[:1]


def iter_json_array(
    data: bytes | DatasetFile,
    log: ProblemLog,
    *,
    max_record_bytes: int,
    start: int = 0,
    trailer: bytes = b"",
) -> Iterator[tuple[int, int, Any]]:
    """Yield (line, index, value) for each element of a top-level JSON array,
    with the line where each element starts, decoding one element at a time
    (memory grows with the largest record, not the file). Syntax errors are
    reported with their line and column; parsing stops at the first one.

    `start` and `trailer` read an array inside an object instead (a task file's
    `{"pairs": [...]}`): the array's offset, and what closes the file after it."""
    decoder = json.JSONDecoder()
    n = len(data)
    body_start = len(_BOM) if data.startswith(_BOM) else 0  # decode_text's utf-8-sig
    pos = _skip_ws(data, start)
    if pos >= n:
        log.add("file is empty", line=1)
        return
    if data[pos] != 0x5B:  # '['
        log.add("expected a JSON array of records at the top level", line=_line_of(data, pos))
        return
    pos = _skip_ws(data, pos + 1)
    index = 0
    line = 1
    line_pos = 0
    if pos < n and data[pos] == 0x5D:  # ']'
        return
    while True:
        if pos >= n:
            log.add(
                "invalid JSON: the array is not closed (file truncated?)", line=_line_of(data, n)
            )
            return
        line += data.count(b"\n", line_pos, pos)
        line_pos = pos
        try:
            decoded = _decode_value(data, pos, max_record_bytes, decoder)
        except json.JSONDecodeError as exc:
            column = exc.colno
            if exc.lineno == 1:  # columns count characters from the line's start
                line_start = max(data.rfind(b"\n", 0, pos) + 1, body_start)
                column += len(data[line_start:pos].decode("utf-8"))
            log.add(
                f"invalid JSON: {exc.msg} (column {column})",
                line=line + exc.lineno - 1,
                index=index,
            )
            return
        except (ValueError, RecursionError) as exc:
            log.add(f"invalid JSON: {_undecodable(exc)}", line=line, index=index)
            return
        if decoded is None:
            log.add(
                f"record is larger than the limit of {max_record_bytes} bytes",
                line=line,
                index=index,
            )
            return
        value, end = decoded
        yield line, index, value
        del value
        index += 1
        _release(data, end)
        pos = _skip_ws(data, end)
        if pos >= n:
            log.add(
                "invalid JSON: the array is not closed (file truncated?)", line=_line_of(data, n)
            )
            return
        if data[pos] == 0x2C:  # ','
            pos = _skip_ws(data, pos + 1)
            continue
        if data[pos] == 0x5D:  # ']'
            rest = _skip_ws(data, pos + 1)
            if trailer and data[rest : rest + len(trailer)] == trailer:
                rest = _skip_ws(data, rest + len(trailer))
            if rest < n:
                log.add("invalid JSON: extra data after the array", line=_line_of(data, rest))
            return
        log.add(
            f"invalid JSON: expected ',' or ']' after record, found {_char_at(data, pos)!r}",
            line=_line_of(data, pos),
        )
        return


def iter_jsonl(
    data: bytes | DatasetFile, log: ProblemLog, *, max_record_bytes: int, raw_lines: bool = False
) -> Iterator[tuple]:
    """Yield (line, index, value) for each non-blank line, decoding one line
    at a time; with `raw_lines`, (line, index, the line's text, value)."""
    index = 0
    pos = len(_BOM) if data.startswith(_BOM) else 0
    n = len(data)
    line_no = 0
    # Split at "\n" only, not splitlines(): JSON strings may hold a raw U+2028 or U+0085.
    while pos <= n:
        line_no += 1
        end = data.find(b"\n", pos)
        end = n if end == -1 else end
        start, pos = pos, end + 1
        _release(data, start)
        if end - start > max_record_bytes:
            log.add(
                f"record is larger than the limit of {max_record_bytes} bytes",
                line=line_no,
                index=index,
            )
            if log.full:
                return
            index += 1
            continue
        raw = data[start:end].decode("utf-8")
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            log.add(f"invalid JSON: {exc.msg} (column {exc.colno})", line=line_no, index=index)
            if log.full:
                return
        except (ValueError, RecursionError) as exc:
            log.add(f"invalid JSON: {_undecodable(exc)}", line=line_no, index=index)
            if log.full:
                return
        else:
            if raw_lines:
                yield line_no, index, raw, value
            else:
                del raw
                yield line_no, index, value
        index += 1


# How json.dumps may have written a line: (item separator, key separator, ensure_ascii).
STYLES = {
    "spaced": (", ", ": ", False),
    "spaced-ascii": (", ", ": ", True),
    "compact": (",", ":", False),
    "compact-ascii": (",", ":", True),
}


def line_style(value: dict, raw: str) -> str:
    """The json.dumps style that writes `value` as `raw`, or "" if none does."""
    for name, (item_sep, key_sep, ascii_only) in STYLES.items():
        if json.dumps(value, separators=(item_sep, key_sep), ensure_ascii=ascii_only) == raw:
            return name
    return ""


# A record kept byte for byte (RewardBench 2's and the ranked format's lines):
# its meta holds the record as JSON text with the texts left out (``fields``:
# key order kept, which jsonb would not) and how the line was written
# (``style``; the line itself in ``raw`` when no json.dumps style writes it).


def kept_line(value: dict, raw: str | None, text_keys: tuple[str, ...]) -> dict:
    """The meta's ``fields``, ``style`` and (if needed) ``raw`` of a record
    decoded as `value` from the line `raw` (None: written "spaced")."""
    rest = {k: (None if k in text_keys else v) for k, v in value.items()}
    style = line_style(value, raw) if raw is not None else "spaced"
    kept = {"fields": json.dumps(rest, ensure_ascii=False), "style": style or "raw"}
    if not style:
        kept["raw"] = raw
    return kept


def kept_value(meta: dict, texts: dict[str, Any]) -> dict:
    """The kept record, in the file's key order, with these texts."""
    value = json.loads(meta["fields"])
    return {k: texts.get(k, v) for k, v in value.items()}


def styled_line(meta: dict, value: dict) -> str:
    """`value` as a JSONL line (no newline): the imported line itself when
    it decodes to `value`, else written as the file wrote it."""
    style = meta.get("style", "spaced")
    if style == "raw":
        if json.loads(meta["raw"]) == value:
            return meta["raw"]
        style = "spaced"
    item_sep, key_sep, ascii_only = STYLES[style]
    return json.dumps(value, separators=(item_sep, key_sep), ensure_ascii=ascii_only)


def _undecodable(exc: ValueError | RecursionError) -> str:
    """Why valid-looking JSON could not be decoded: the decoder gives up on
    very deep nesting (Python's recursion limit) and on integers longer than
    Python converts (sys.int_info.str_digits_check_threshold), without a position."""
    if isinstance(exc, RecursionError):
        return "values are nested too deeply"
    if "digits" in str(exc):
        return "a number has too many digits"
    return str(exc)


def check_utf8(data: bytes | DatasetFile, log: ProblemLog) -> bool:
    """Whether `data` is UTF-8 (a leading byte-order mark allowed), checked a
    megabyte at a time rather than decoded whole."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    base = len(_BOM) if data.startswith(_BOM) else 0  # positions as utf-8-sig counts them
    for offset in range(0, len(data), _UTF8_CHUNK):
        pending = len(decoder.getstate()[0])
        final = offset + _UTF8_CHUNK >= len(data)
        try:
            decoder.decode(data[offset : offset + _UTF8_CHUNK], final)
            _release(data, offset)
        except UnicodeDecodeError as exc:
            # utf-8-sig counts from after the mark, as decode_text did.
            byte = exc.start if offset == 0 else offset - pending + exc.start - base
            log.add(f"file is not valid UTF-8 (byte {byte})", line=_line_of(data, byte))
            return False
    return True
