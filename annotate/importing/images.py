"""Image validation: Pillow's limits, orientation, and checking every image a
dataset names before anything is written.
"""

from __future__ import annotations

import hashlib
import io
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from PIL import Image, ImageOps, UnidentifiedImageError

from annotate.importing.records import (
    EXIF_ORIENTATION,
    ImageInfo,
    ImageLimits,
)
from annotate.importing.sources import ImageSource

# --- Image validation ----------------------------------------------------------------


@contextmanager
def pillow_limits(limits: ImageLimits) -> Iterator[None]:
    """Pillow's pixel limit and bomb-warning filter for the duration. Both are
    process-wide state, so threads must not set them per image: enter this
    once around the work (see validate_images)."""
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


def _inspect_image(data: bytes, ref: str, limits: ImageLimits) -> ImageInfo:
    """inspect_image, for callers already inside pillow_limits()."""
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
        sha256=hashlib.sha256(data).hexdigest(),
        format=fmt,
        width=width,
        height=height,
        size_bytes=len(data),
        transpose=transpose,
    )


def oriented_image_bytes(data: bytes) -> bytes:
    """Re-encode an image with its EXIF orientation applied (deterministic)."""
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
