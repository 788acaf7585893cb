"""Image validation: Pillow's limits, orientation, and checking every image a
dataset names before anything is written (validate_images: every record's
image, each distinct one read once, in threads).
"""

from __future__ import annotations

import hashlib
import io
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import partial
from itertools import chain
from typing import Any

from annotate.importing.records import (
    EXIF_ORIENTATION,
    IMAGE_BATCH,
    IMAGE_THREADS,
    ImageInfo,
    ImageLimits,
    ProblemLog,
)
from annotate.importing.sources import ImageSource, safe_relative_path

# --- Image validation ----------------------------------------------------------------


@contextmanager
def pillow_limits(limits: ImageLimits) -> Iterator[None]:
    """Pillow's pixel limit and bomb-warning filter for the duration. Both are
    process-wide state, so threads must not set them per image: enter this
    once around the work (see validate_images)."""
    from PIL import Image  # heavy: loaded where used (issue 32)

    previous_limit = Image.MAX_IMAGE_PIXELS
    try:
        # Pillow refuses outright above 2x this (a bomb); between 1x and 2x it
        # only warns, and the size check in _inspect_image gives the clearer message.
        Image.MAX_IMAGE_PIXELS = limits.max_pixels
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            yield
    finally:
        Image.MAX_IMAGE_PIXELS = previous_limit


def inspect_image(data: bytes, ref: str, limits: ImageLimits) -> ImageInfo:
    """Validate image bytes with Pillow. Raises ValueError with a readable reason."""
    with pillow_limits(limits):
        return _inspect_image(data, ref, limits)


def _inspect_image(
    data: bytes, ref: str, limits: ImageLimits, sha256: str | None = None
) -> ImageInfo:
    """inspect_image, for callers already inside pillow_limits(); `sha256`:
    the data's, if the caller has it (hashed once, not twice)."""
    from PIL import Image, UnidentifiedImageError

    if not data:
        raise ValueError("file is empty")
    try:
        img = Image.open(io.BytesIO(data))
    except UnidentifiedImageError:
        raise ValueError("not an image Pillow can read") from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise ValueError(
            f"refused as a decompression bomb (more than {limits.max_pixels} pixels)"
        ) from None
    except (OSError, ValueError, EOFError) as exc:
        # A known signature with a broken header: Pillow's own words ("Truncated
        # File Read", "could not create decoder object") need the context.
        raise ValueError(f"image data is corrupt or truncated ({exc})") from None
    fmt = img.format or ""
    if fmt not in limits.allowed_formats:
        raise ValueError(
            f"format {fmt or 'unknown'} is not allowed "
            f"(allowed: {', '.join(limits.allowed_formats)})"
        )
    width, height = img.size
    if width <= 0 or height <= 0:
        raise ValueError("image has no pixels")
    if width * height > limits.max_pixels:
        raise ValueError(
            f"{width}x{height} is {width * height} pixels, "
            f"more than the limit of {limits.max_pixels}"
        )
    try:
        if fmt == "PNG":
            img.verify()  # walks every chunk and checks its CRC
            # Intact chunks can still hold too little pixel data: decode it all
            # (zlib releases the GIL, so the import's threads overlap this).
            decoded = Image.open(io.BytesIO(data))
            decoded.load()
            orientation = 1
            if b"eXIf" in data:  # rare
                orientation = decoded.getexif().get(EXIF_ORIENTATION, 1)
        else:
            if fmt == "JPEG":
                img.draft("RGB", (max(1, width // 8), max(1, height // 8)))
            img.load()  # full decode catches truncated data
            orientation = img.getexif().get(EXIF_ORIENTATION, 1)
    except Exception as exc:
        raise ValueError(f"image data is corrupt or truncated ({exc})") from None
    transpose = orientation not in (None, 1)
    if transpose:
        data = oriented_image_bytes(data)
        width, height = (height, width) if orientation in (5, 6, 7, 8) else (width, height)
    return ImageInfo(
        ref=ref,
        sha256=hashlib.sha256(data).hexdigest() if transpose or sha256 is None else sha256,
        format=fmt,
        width=width,
        height=height,
        size_bytes=len(data),
        transpose=transpose,
    )


def oriented_image_bytes(data: bytes) -> bytes:
    """Re-encode an image with its EXIF orientation applied (deterministic)."""
    from PIL import Image, ImageOps

    with Image.open(io.BytesIO(data)) as img:
        fmt = img.format or "PNG"
        rotated = ImageOps.exif_transpose(img)
        out = io.BytesIO()
        if fmt == "JPEG":
            rotated.save(out, format="JPEG", quality=95)
        else:
            rotated.save(out, format=fmt)
    return out.getvalue()


def stored_image_bytes(source: ImageSource, info: ImageInfo, limits: ImageLimits) -> bytes:
    data = source.read(info.ref, limits.max_bytes)
    return oriented_image_bytes(data) if info.transpose else data


def validate_images(
    records: list[Any],
    fmt: str,
    pairs_options: Any,
    source: ImageSource,
    limits: ImageLimits,
    log: ProblemLog,
    progress=None,
) -> dict[str, ImageInfo]:
    infos: dict[str, ImageInfo] = {}
    failed: dict[str, str] = {}
    image_field = "Image" if fmt == "mrb" else pairs_options.source_key("image")
    refs = [safe_relative_path(record.image_ref) for record in records]
    # Each distinct image is checked once, in threads, in the order the records
    # first use it; the loop below takes the results in that same order, so
    # problems are reported (and the cap applies) exactly as a serial pass.
    distinct = [ref for ref in dict.fromkeys(refs) if ref is not None]
    batches = [distinct[i : i + IMAGE_BATCH] for i in range(0, len(distinct), IMAGE_BATCH)]
    with (
        pillow_limits(limits),
        ThreadPoolExecutor(IMAGE_THREADS, thread_name_prefix="import-image") as pool,
    ):
        checked = chain.from_iterable(pool.map(partial(_check_images, source, limits), batches))
        try:
            for record, ref in zip(records, refs, strict=True):
                if progress is not None:
                    progress(1)
                if log.full:
                    log.truncated = True  # images are left unchecked
                    break
                if ref is None:
                    log.add(
                        "image path is absolute or contains '..'",
                        line=record.line,
                        index=record.index,
                        field=image_field,
                        detail=f"image path {record.image_ref!r}",
                    )
                    continue
                record.image_ref = ref
                if ref in infos:
                    continue
                if ref not in failed:
                    result = next(checked)
                    if isinstance(result, ImageInfo):
                        infos[ref] = result
                        continue
                    failed[ref] = result
                # The path is the record's own detail: one missing archive or
                # folder is one problem, however many images it leaves out.
                log.add(
                    failed[ref],
                    line=record.line,
                    index=record.index,
                    field=image_field,
                    detail=f"image {ref!r}",
                )
        finally:
            pool.shutdown(cancel_futures=True)  # after an early stop, skip the rest
    return infos


def _check_images(
    source: ImageSource, limits: ImageLimits, refs: list[str]
) -> list[ImageInfo | str]:
    """Read and inspect images, in a worker thread: for each, its ImageInfo or why not."""
    return [check_image(source, limits, ref) for ref in refs]


def check_image(source: ImageSource, limits: ImageLimits, ref: str) -> ImageInfo | str:
    """One image: its ImageInfo, or why not."""
    known = source.checked(ref)
    if known is not None:
        return known
    try:
        return _inspect_image(source.read(ref, limits.max_bytes), ref, limits)
    except FileNotFoundError as exc:
        return str(exc) or "not found"
    except (OSError, ValueError) as exc:
        return str(exc)


def check_images_once(
    source: ImageSource, limits, refs: dict[str, tuple[int, int]], log: ProblemLog
) -> dict[str, ImageInfo]:
    """Each distinct image (`refs`: normalised path -> where first used, as
    (line, index)) read and checked once, in threads; problems go to `log`."""

    check = partial(check_image, source, limits)
    infos: dict[str, ImageInfo] = {}
    with (
        pillow_limits(limits),
        ThreadPoolExecutor(IMAGE_THREADS, thread_name_prefix="import-image") as pool,
    ):
        for ref, outcome in zip(refs, pool.map(check, refs), strict=True):
            if isinstance(outcome, ImageInfo):
                infos[ref] = outcome
            else:
                line, index = refs[ref]
                log.add(f"image {ref!r}: {outcome}", line=line, index=index)
    return infos
