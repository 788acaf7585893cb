"""Hugging Face parquet (the `datasets` layout): annotate.importing.hfparquet
turns the rows into the JSONL (or, for a studio release's parquet, the
Multimodal RewardBench JSON) records they stand for, read as those files are
(formats.mrb); problems name the parquet file's rows and columns."""

from __future__ import annotations

from annotate.importing import hfparquet
from annotate.importing.formats import FORMATS, DatasetSource, ParsedFile, ReadContext, mrb

NAMES = ("parquet",)
SUFFIXES = (".parquet",)
# The file's layout decides how its rows read, whatever format was named.
DEFINITIVE = True


def detect(source: DatasetSource) -> bool:
    if source.archive is not None or source.path.suffix.lower() != hfparquet.PARQUET_SUFFIX:
        return False
    # A parquet layout a format of its own reads (PARQUET_LAYOUT) is that format's.
    return not any(getattr(m, "PARQUET_LAYOUT", False) and m.detect(source) for m in FORMATS)


def read(source: DatasetSource, context: ReadContext) -> ParsedFile:
    return hfparquet.read_with(
        source,
        context,
        lambda parquet: mrb.read_data(
            parquet.data,
            filename=source.path.name,
            fmt=parquet.fmt,  # the layout decides
            images=parquet.images,
            context=context,
        ),
        field_map=context.field_map,
    )
