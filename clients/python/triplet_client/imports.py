"""Importing a dataset (README step 3).

The server checks every record and image and writes them in the same request,
all or nothing, so there is no job to poll: the call returns when the import
is done, raises ImportFailed (with every problem: file, line, record, field)
when it is refused, and `on_progress` reports the upload's bytes."""

from __future__ import annotations

from collections.abc import Mapping

from triplet_client.models import ImportResult, Project, from_json
from triplet_client.transport import ByteProgress, Resource, Upload, slug_of


def _pairs(mapping: Mapping[str, str] | str) -> str:
    if isinstance(mapping, str):
        return mapping
    return "\n".join(f"{k}={v}" for k, v in mapping.items())


class ImportsApi(Resource):
    def import_items(
        self,
        project: str | Project,
        dataset: Upload,
        images: Upload | None = None,
        *,
        format: str = "",
        domain: str = "",
        field_map: Mapping[str, str] | str = "",
        duplicates: str = "refuse",
        domain_from: str = "",
        domain_map: Mapping[str, str] | str = "",
        gold_from_label: bool = False,
        update: bool = False,
        on_progress: ByteProgress | None = None,
    ) -> ImportResult:
        """Import items (project admins). `dataset`: a path, or (name, bytes
        or binary file): Multimodal RewardBench .json, .jsonl, .parquet,
        an MMRB2 task file, a .zip holding one with its images, or a studio
        release .zip; `images`: a .zip of the images of a .json/.jsonl.
        Options as the API's (`field_map` and `domain_map` may be dicts).
        Importing the same file again changes nothing."""
        data = {
            "format": format,
            "domain": domain,
            "field_map": _pairs(field_map),
            "duplicates": duplicates,
            "domain_from": domain_from,
            "domain_map": _pairs(domain_map),
            "gold_from_label": gold_from_label,
            "update": update,
        }
        answer = self._t.upload(
            f"projects/{slug_of(project)}/imports/",
            {"dataset": dataset, "images": images},
            data,
            on_progress,
        )
        return from_json(ImportResult, answer)
