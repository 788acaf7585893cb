"""The data set of ``bench/import_bench.py --parquet``: one Hugging Face
parquet file (the `datasets` layout: ``image`` a ``struct<bytes, path>``)
with N chosen/rejected pairs, each with its own ~20 KB image in the row.

Rendering 100,000 pictures as ``import_bench`` does would take about 20
minutes on two cores, so a pool of POOL base pictures is rendered (seven in
eight JPEG, one in eight PNG, about 20 KB each, as import_bench's) and each
row's image is made distinct by a marker inside the file: a JPEG comment
segment (COM) after the start marker, a PNG ``tEXt`` chunk before ``IEND``.
Both are valid files that Pillow decodes exactly as the base picture, so
the import validates, hashes and stores N distinct images of the same size
and decoding cost. Rows are written in row groups of 100, as `datasets`
writes image sets.
"""

from __future__ import annotations

import hashlib
import random
import struct
import zlib
from pathlib import Path

POOL = 512
ROW_GROUP_ROWS = 100


def distinct_jpeg(base: bytes, serial: int) -> bytes:
    comment = f"bench image {serial}".encode()
    segment = b"\xff\xfe" + struct.pack(">H", len(comment) + 2) + comment
    return base[:2] + segment + base[2:]


def distinct_png(base: bytes, serial: int) -> bytes:
    body = b"tEXt" + b"Comment\x00" + f"bench image {serial}".encode()
    chunk = struct.pack(">I", len(body) - 4) + body + struct.pack(">I", zlib.crc32(body))
    end = base.rindex(b"IEND") - 4  # the IEND chunk's length field
    return base[:end] + chunk + base[end:]


def generate_parquet(folder: Path, items: int, *, render, knobs, words, categories) -> dict:
    """Write `folder/pairs.parquet`; return a summary. `render(seed, fmt,
    knob)` draws a picture (import_bench.render_image), `knobs` maps a format
    to its size knob, `words(rng, low, high)` makes text, `categories` is
    (category, ID prefix, count) per source."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    pool = [
        ("PNG", render(n, "PNG", knobs["PNG"]))
        if n % 8 == 7
        else ("JPEG", render(n, "JPEG", knobs["JPEG"]))
        for n in range(POOL)
    ]
    schema = pa.schema(
        [
            ("id", pa.string()),
            ("prompt", pa.string()),
            ("chosen", pa.string()),
            ("rejected", pa.string()),
            ("image", pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
            ("category", pa.string()),
        ]
    )
    rng = random.Random(100_000)
    path = folder / "pairs.parquet"
    sizes: list[int] = []
    digests: set[str] = set()
    pngs = 0
    with pq.ParquetWriter(path, schema) as writer:
        rows: dict[str, list] = {name: [] for name in schema.names}
        serial = 0
        for category, prefix, count in categories:
            for n in range(count):
                fmt, base = pool[serial % POOL]
                data = (distinct_png if fmt == "PNG" else distinct_jpeg)(base, serial)
                pngs += fmt == "PNG"
                sizes.append(len(data))
                digests.add(hashlib.sha256(data).hexdigest())
                ext = "png" if fmt == "PNG" else "jpg"
                rows["id"].append(f"{prefix}_{n}")
                rows["prompt"].append(words(rng, 10, 60) + "?")
                rows["chosen"].append(words(rng, 40, 400))
                rows["rejected"].append(words(rng, 40, 400))
                rows["image"].append({"bytes": data, "path": f"{prefix}/{n}.{ext}"})
                rows["category"].append(category)
                serial += 1
                if len(rows["id"]) == ROW_GROUP_ROWS:
                    writer.write_table(pa.table(rows, schema=schema))
                    rows = {name: [] for name in schema.names}
        if rows["id"]:
            writer.write_table(pa.table(rows, schema=schema))
    if len(digests) != items:
        raise SystemExit(f"generated images are not distinct ({len(digests)} of {items})")
    sizes.sort()
    return {
        "items": items,
        "parquet_bytes": path.stat().st_size,
        "image_bytes": sum(sizes),
        "median_image_bytes": sizes[len(sizes) // 2],
        "pngs": pngs,
    }
