"""Writing a project's Multimodal RewardBench 2 items in the published layout
(issue 24): `<task>.json` per MMRB2 domain beside `images/` and
`input_images/`, each file as `json.dump(indent=2)` writes it, images at the
paths the pairs name, so a task file imported and exported again is the same
bytes.

`human_annotations` and `chosen` come from the studio's votes and verdict
where it has them (curation.benchmarks.mmrb2.annotations), else they are the
imported ones. With `rekey`, IDs are replaced by label-free ones
(curation.releases.rekey: the published reasoning IDs name the chosen model
first) and response images renamed `images/{new id}_{k}{ext}` to match; the
old-to-new map is returned to the caller, never written into the release.
"""

from __future__ import annotations

import json
import posixpath
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any, NamedTuple

from django.core.files.storage import default_storage

from annotate.importing.formats.mmrb2.taskfile import pair_record, write_task_file
from annotate.importing.sources import safe_relative_path
from annotate.models import Domain, Item, ItemPart, Judgement, PartKind, Project
from curation.benchmarks.mmrb2.annotations import Vote, published_fields, written_from_votes
from curation.benchmarks.mmrb2.benchmark import PREFIX, task_of_category
from curation.models import RELEASABLE, Verdict
from curation.releases.rekey import in_new_id_order, rekeyed_id

_BATCH = 500


class ExportConflict(Exception):
    """Two different images would be written at one path."""


def mmrb2_domains(project: Project) -> list[tuple[str, Domain]]:
    """(task, domain) of the project's MMRB2 domains, in the project's order."""
    return [
        (task_of_category(domain.export_category), domain)
        for domain in project.domains.filter(export_category__startswith=PREFIX)
    ]


class PairWritten(NamedTuple):
    """A pair written to a task file (what a release records of it)."""

    item_id: int
    external_id: str
    released_id: str
    domain: str  # slug
    task: str
    chosen: str  # the file's "A" / "B"
    mrb_shaped: bool  # also an MRB record (the item has the MRB columns)
    prompt_source: str = ""  # the pair's `prompt_source`
    provenance: str = ""  # the verdict's (unanimous, majority, adjudicated, …)
    from_votes: bool = False  # human_annotations written from the studio's votes


def export_mmrb2(
    *,
    project: Project,
    folder: Path,
    rekey: bool = False,
    salt: str = "",
    item_ids: Any = None,
    domain_slugs: Any = None,
) -> dict[str, Any]:
    """Write every MMRB2 task of the project into `folder` (only the items in
    `item_ids` and the domains in `domain_slugs` if given: a release's).
    Returns {"tasks": {task: pairs written}, "images": files written,
    "ids": {old: new}, "pairs": [PairWritten, ...]}."""
    folder.mkdir(parents=True, exist_ok=True)
    written_images: dict[str, str] = {}  # release path -> sha256
    summary: dict[str, Any] = {"tasks": {}, "images": 0, "ids": {}, "pairs": []}
    scale = project.preference_scale
    for task, domain in mmrb2_domains(project):
        if domain_slugs is not None and domain.slug not in domain_slugs:
            continue
        items = domain.items.filter(meta__has_key="mmrb2").order_by("pk")
        if item_ids is not None:
            items = items.filter(pk__in=item_ids)
        rows = list(items.values_list("pk", "external_id"))
        if rekey:
            # In the order of the new IDs: the published order would map each
            # new ID back to its old one by position.
            rows = in_new_id_order(rows, lambda row, task=task: rekeyed_id(salt, task, row[1]))
        ids = [pk for pk, _ in rows]
        count = 0

        def pairs(ids=ids, task=task, domain=domain):
            nonlocal count
            for item, parts, votes, (final_choice, provenance) in _items_with_parts(ids):
                new_id = rekeyed_id(salt, task, item.external_id) if rekey else item.external_id
                if rekey:
                    summary["ids"][item.external_id] = new_id
                content: dict[str, list[tuple[str, str]]] = {}
                k = 0
                for slot in ("response_1", "response_2", "prompt"):
                    content[slot] = []
                    for part in parts.get(slot, ()):
                        if part.kind == PartKind.TEXT:
                            content[slot].append(("text", part.text))
                            continue
                        path = part.source_path
                        if rekey and slot != "prompt":
                            ext = posixpath.splitext(path)[1]
                            path = f"images/{new_id}_{k}{ext}"
                            k += 1
                        _copy_image(part.image, path, folder, written_images)
                        content[slot].append(("image", path))
                # The pair's fields in their own key order (see mmrb2_meta).
                fields = published_fields(
                    json.loads(item.meta["mmrb2"]["fields"]),
                    task=task,
                    votes=votes,
                    scale=scale,
                    final_choice=final_choice,
                )
                summary["pairs"].append(
                    PairWritten(
                        item.pk,
                        item.external_id,
                        new_id,
                        domain.slug,
                        task,
                        fields["chosen"],
                        item.image_id is not None,
                        str(fields.get("prompt_source") or ""),
                        provenance,
                        written_from_votes(task=task, votes=votes, scale=scale),
                    )
                )
                count += 1
                yield pair_record(
                    external_id=new_id,
                    model_1=item.model_1,
                    model_2=item.model_2,
                    parts=content,
                    fields=fields,
                )

        with (folder / f"{task}.json").open("w", encoding="utf-8", newline="") as fh:
            write_task_file(pairs(), fh)
        summary["tasks"][task] = count
    summary["images"] = len(written_images)
    return summary


def _items_with_parts(ids: list[int]) -> Any:
    """(item, {slot: [parts]}, [Vote], (decided side or None, provenance)) in the order of
    `ids`, in batches: four queries per _BATCH items."""
    for start in range(0, len(ids), _BATCH):
        chunk = ids[start : start + _BATCH]
        by_item: dict[int, dict[str, list[ItemPart]]] = {pk: {} for pk in chunk}
        parts = (
            ItemPart.objects.filter(item_id__in=chunk)
            .select_related("image")
            .order_by("item_id", "slot", "position")
        )
        for part in parts:
            by_item[part.item_id].setdefault(part.slot, []).append(part)
        votes = current_votes(chunk)
        decided = {
            item_id: (final_choice, provenance)
            for item_id, final_choice, provenance in Verdict.objects.filter(
                RELEASABLE, item_id__in=chunk
            ).values_list("item_id", "final_choice", "provenance")
        }
        items = Item.objects.order_by().in_bulk(chunk)
        for pk in chunk:
            item = items[pk]
            yield item, by_item[pk], votes.get(pk, []), decided.get(pk, (None, ""))


def current_votes(item_ids: list[int]) -> dict[int, list[Vote]]:
    """Each annotator's latest revision of their vote on the items, in the
    order the annotators first submitted (Assignment.submitted_at is set by
    the first submission; a revision keeps its place), by item id."""
    rows = (
        Judgement.objects.with_pair_answers()
        .filter(assignment__item_id__in=item_ids, is_current=True)
        .order_by("assignment__item_id", "assignment__submitted_at", "assignment_id")
        .values_list("assignment__item_id", "strength", "grade_1", "grade_2")
    )
    votes: dict[int, list[Vote]] = defaultdict(list)
    for item_id, strength, grade_1, grade_2 in rows:
        votes[item_id].append(Vote(strength, grade_1, grade_2))
    return votes


def _copy_image(image, path: str, folder: Path, written: dict[str, str]) -> None:
    """Copy a stored image to `path` under `folder` (once per path)."""
    ref = safe_relative_path(path)
    if ref is None:
        raise ExportConflict(f"image path {path!r} leaves the release folder")
    known = written.get(ref)
    if known is not None:
        if known != image.sha256:
            raise ExportConflict(f"two different images would be written to {ref!r}")
        return
    target = folder / ref
    target.parent.mkdir(parents=True, exist_ok=True)
    with default_storage.open(image.file, "rb") as src, target.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    written[ref] = image.sha256
