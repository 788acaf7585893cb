"""Multimodal RewardBench 2 task files (facebookresearch/MMRB2) as an input
format (issue 24; a format module since issue 32).

A task file (`t2i.json`, `edit.json`, `interleaved.json`, `reasoning.json`;
alone, or in a zip with its images) is read pair by pair (jsonscan,
memory-mapped) and checked whole, every image once (Pillow, in threads),
before anything is written. A pair's prompt and responses are ordered
lists of text and image parts (image paths resolve against the task file's
folder, or the images given with it). Its domain is the task's
(`mmrb2-t2i`, … created if missing) unless the import's domain options say
otherwise; `chosen`, `human_annotations`, `prompt_source`,
`prompt_metadata` (and any other key) are kept verbatim in
`Item.meta["mmrb2"]`, image paths in each part's `source_path`, so the
export (curation) writes the file back byte for byte. `human_annotations`
are the pair's per-annotator labels (cast as votes on request: `votes`).

`taskfile` reads and writes the file itself (pure Python).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

from annotate.importing import passes
from annotate.importing.formats import (
    IMAGE,
    TEXT,
    DatasetSource,
    ParsedFile,
    ParsedItem,
    ParsedPart,
    ReadContext,
)
from annotate.importing.formats.mmrb2 import taskfile
from annotate.importing.images import check_images_once
from annotate.importing.imported_votes import PublishedVote
from annotate.importing.jsonscan import iter_json_array
from annotate.importing.options import RecordRules
from annotate.importing.records import (
    MAX_IMAGE_PATH_LENGTH,
    ImageInfo,
    ImportFailed,
    ImportProblem,
    ProblemLog,
)
from annotate.importing.sources import safe_relative_path
from annotate.loop import scales
from annotate.models import Domain, DomainKind, Project

FORMAT = "mmrb2"
NAMES = (FORMAT,)
SUFFIXES = (".json",)
# Its per-annotator labels (human_annotations) can be cast as votes.
CASTS_VOTES = True
LABELS = {
    "prompt": "prompt_content",
    "response_1": "response_a",
    "response_2": "response_b",
    "models": "model_name",
    "meta:mmrb2": "chosen/human_annotations/prompt fields",
}
_UNKNOWN_TASK = (
    f"unknown MMRB2 task; name the file {', '.join(taskfile.TASKS)}.json or give the task"
)


def seed_demo(users: dict, folder: Path, ensure_memberships) -> list:
    """Its demo projects (manage.py seed_demo): .demo."""
    from annotate.importing.formats.mmrb2.demo import seed_generation_projects

    return seed_generation_projects(users, folder, ensure_memberships)


def detect(source: DatasetSource) -> bool:
    if not source.name.lower().endswith(".json"):
        return False
    return taskfile.looks_like_task_file(source.head())


def domain_fields(task: str) -> dict[str, Any]:
    return {
        "title": taskfile.TASKS[task],
        "export_category": f"mmrb2/{task}",
        "kind": DomainKind.PREFERENCE,
        "position": 100 + list(taskfile.TASKS).index(task),
    }


def task_domain(project: Project, task: str) -> Domain:
    """The project's domain for an MMRB2 task, created if missing."""
    domain, _ = Domain.objects.get_or_create(
        project=project, slug=f"mmrb2-{task}", defaults=domain_fields(task)
    )
    return domain


def read(source: DatasetSource, context: ReadContext) -> ParsedFile:
    filename = source.label
    task = context.given.get("task") or taskfile.task_of(source.name)
    if task not in taskfile.TASKS:
        raise ImportFailed([ImportProblem(filename, _UNKNOWN_TASK)])
    data = source.open_data(context.stack)
    # A task file's zip holds its images; the published layout's image paths
    # are relative to the task file's folder.
    images = source.image_source(context.images)
    bounds = context.bounds
    log = ProblemLog(filename, bounds.max_errors, context.options.wording)
    start = taskfile.pairs_array_start(data)
    if start is None:
        raise ImportFailed([ImportProblem(filename, 'not an MMRB2 task file {"pairs": [...]}')])
    slug = f"mmrb2-{task}"
    known = {**context.known, slug: slug}
    derived = context.domain or context.options.domain_from or context.options.domain_map
    # The task's domain, created with the items if they go there.
    new_domains = {} if slug in context.known or derived else {slug: domain_fields(task)}

    rules = partial(
        RecordRules, context.options, known_categories=known, id_field="id",
        category_field="prompt_source", image_field="prompt_content",
    )  # fmt: skip

    def parse(value: Any, line: int, index: int) -> tuple[ParsedItem | None, list]:
        pair, problems = taskfile.parse_pair(value)
        item = None if pair is None else _item(pair, task, line, index, context.domain or slug)
        return item, problems

    def pairs(log: ProblemLog) -> Iterator[passes.Record]:
        values = iter_json_array(
            data, log, max_record_bytes=bounds.max_record_bytes, start=start, trailer=b"}"
        )
        lines = ((line, index, None, value) for line, index, value in values)
        return passes.parsed_records(lines, parse, log, bounds)

    # Pass 1: every pair's shape, IDs, domains, image paths; then every image.
    refs: dict[str, tuple[int, int]] = {}  # normalised path -> where first used

    def image_paths(item: ParsedItem, value: Any, line: int, index: int) -> None:
        for path in (
            p.source_path for slot in item.slots().values() for p in slot if p.kind == IMAGE
        ):
            ref = safe_relative_path(path)
            if len(path) > MAX_IMAGE_PATH_LENGTH:
                log.add(
                    f"image path is longer than {MAX_IMAGE_PATH_LENGTH}", line=line, index=index
                )
            elif ref is None:
                log.add(f"image path {path!r} is absolute or contains '..'", line=line, index=index)
            else:
                refs.setdefault(ref, (line, index))

    first = passes.check_all(pairs, rules, log, known, inspect=image_paths)
    infos = check_images_once(images, context.limits, refs, log)
    log.raise_if_any()
    renames = first.renames

    def items() -> Iterator[ParsedItem]:
        yield from passes.checked_items(
            pairs(ProblemLog(filename, 1)), rules(renames=renames), known
        )

    ids = [item.external_id for item in items()]

    def votes(item: ParsedItem, scale: str) -> list[PublishedVote]:
        return published_votes(
            task=task,
            annotations=item.labels,
            scale=scale,
            filename=filename,
            pair_id=item.external_id,
        )

    return ParsedFile(
        format=FORMAT,
        filename=filename,
        items=items,
        count=len(ids),
        ids=ids,
        images={ref: info for ref, info in infos.items()},
        image_source=images,
        fingerprint=partial(_content_hash, infos=infos),
        id_field="id",
        labels=LABELS,
        skipped=first.skipped if context.options.duplicates == "keep-first" else 0,
        renamed=len(renames),
        new_domains=new_domains,
        votes=votes,
    )


def _item(pair: taskfile.Pair, task: str, line: int, index: int, domain: str) -> ParsedItem:
    def parts(slot: str) -> list[ParsedPart]:
        return [
            ParsedPart(IMAGE, ref=safe_relative_path(value) or "", source_path=value)
            if kind == "image"
            else ParsedPart(TEXT, text=value)
            for kind, value in pair.parts[slot]
        ]

    return ParsedItem(
        line=line,
        index=index,
        external_id=pair.external_id,
        domain=domain,
        prompt=parts("prompt"),
        responses=[parts("response_1"), parts("response_2")],
        models=[pair.model_1, pair.model_2],
        meta={"mmrb2": mmrb2_meta(task, pair)},
        labels=pair.fields["human_annotations"],
    )


def _content_hash(item: ParsedItem, *, infos: dict[str, ImageInfo]) -> str:
    """A stable fingerprint of the pair and its images' bytes (as stored
    since issue 24: a task file imported then re-imports as a no-op)."""
    slots = item.slots()
    parts = {
        slot: [[p.kind, p.source_path if p.kind == IMAGE else p.text] for p in entries]
        for slot, entries in slots.items()
    }
    shas = [infos[p.ref].sha256 for entries in slots.values() for p in entries if p.kind == IMAGE]
    fields = json.loads(item.meta["mmrb2"]["fields"])
    payload = [FORMAT, item.external_id, item.model(0), item.model(1), parts, fields, shas]
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def mmrb2_meta(task: str, pair: taskfile.Pair) -> dict:
    """Item.meta["mmrb2"]: the pair's own fields as JSON text (`fields`, in
    the file's key order: PostgreSQL's jsonb reorders an object's keys, and
    the export must write them back as they were), and the few that queries
    read (prompt_source for sub-buckets, chosen, human_annotations)."""
    return {
        "task": task,
        "prompt_source": pair.fields["prompt_source"],
        "chosen": pair.fields["chosen"],
        "human_annotations": pair.fields["human_annotations"],
        "fields": json.dumps(pair.fields),
    }


GRADE_ORDER = {"A": 0, "B": 1, "C": 2}  # A best
REASONING = "reasoning"


def published_votes(
    *, task: str, annotations, scale: str, filename: str, pair_id: str
) -> list[PublishedVote]:
    """The votes of one pair's `human_annotations` (annotate.importing.imported_votes
    casts them). On the text-to-image, editing and interleaved tasks a point
    1..6 (6 = A much better; A is response 1): on a graded6 project the
    point's strength, on an A/B project its side (4..6: response 1, 1..3:
    response 2); a graded7 project has no 1..6 points and is refused. On the
    reasoning task the k-th ratings of `response_a_ratings` and
    `response_b_ratings` (A best … C) are one annotator's letter grades, and
    the better grade is their choice (equal grades: a tie); ratings without
    a partner in the other list are not cast. Raises ImportFailed naming
    the file, the pair and the field."""

    def bad(where: str, message: str) -> ImportFailed:
        return ImportFailed(
            [ImportProblem(filename, f"pair {pair_id!r}, field {where}: {message}")]
        )

    if task == REASONING:
        if not isinstance(annotations, dict):
            raise bad("human_annotations", "expected an object of response_a/b_ratings")
        a = annotations.get("response_a_ratings") or []
        b = annotations.get("response_b_ratings") or []
        votes = []
        for k, (g1, g2) in enumerate(zip(a, b, strict=False)):
            for side, grade in (("a", g1), ("b", g2)):
                if grade not in GRADE_ORDER:
                    raise bad(
                        f"human_annotations.response_{side}_ratings[{k}]",
                        f"{grade!r} is not a grade (A, B or C)",
                    )
            order = GRADE_ORDER[g1] - GRADE_ORDER[g2]
            choice = "1" if order < 0 else "2" if order > 0 else "tie"
            votes.append(PublishedVote(choice, None, g1, g2))
        return votes
    if not isinstance(annotations, list):
        raise bad("human_annotations", "expected a list of points 1-6")
    if scale == scales.GRADED7:
        raise ImportFailed(
            [
                ImportProblem(
                    filename,
                    "MMRB2's annotations are points of a six-point scale: casting them as votes "
                    "needs an A/B or a graded 6-point project, not a 7-point one",
                )
            ]
        )
    votes = []
    for k, point in enumerate(annotations):
        if isinstance(point, bool) or not isinstance(point, int) or not 1 <= point <= 6:
            raise bad(f"human_annotations[{k}]", f"{point!r} is not a point 1-6")
        strength = scales.strength_of_value(point, scales.GRADED6)
        choice = scales.choice_of(strength)
        votes.append(PublishedVote(choice, strength if scale == scales.GRADED6 else None))
    return votes


def import_mmrb2_from_paths(
    *,
    project: Project,
    dataset: Path,
    images: Path | None = None,
    update: bool = False,
    cast_votes: bool = False,
    **options,
):
    """A task file through the one import path (the service), named as this
    format: kept for scripts and tests that import MMRB2 task files."""
    from annotate.importing.service import import_items_from_paths

    return import_items_from_paths(
        project=project,
        dataset=dataset,
        images=images,
        fmt=FORMAT,
        update=update,
        cast_votes=cast_votes,
        **options,
    )
