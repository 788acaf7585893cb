"""The generation demo projects of `manage.py seed_demo` (issue 24;
this format's `seed_demo`): a
text-to-image and editing project and an interleaved one, both on MMRB2's
six-point scale, their pairs drawn by demo.generation and brought in
through the real MMRB2 import, and the demo annotators' graded votes on
two thirds of the items, cast through the annotation service (claims in
the project's order, as on the compare page), so the agreement page has
ordinal alpha and the rest of the items wait for whoever signs in.

Idempotent: a project with all its items is not generated again, and votes
are cast only in a project nobody has been assigned an item of.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from django.core.management.base import CommandError
from django.db import transaction

from annotate.importing.formats import DemoSeeded
from annotate.importing.formats.mmrb2 import import_mmrb2_from_paths, task_domain
from annotate.importing.records import ImportFailed
from annotate.loop import scales
from annotate.loop.rules import Vote
from annotate.loop.service import claim_next_item, submit_judgement
from annotate.models import Assignment, Domain, Item, PreferenceScale, Project
from demo.generation import GENERATION_SEED, build_generation_pairs, write_mmrb2_tasks
from demo.project import (
    GENERATION_DOMAIN_GUIDELINES,
    INTERLEAVED_PROJECT_DESCRIPTION,
    INTERLEAVED_PROJECT_GUIDELINES,
    INTERLEAVED_PROJECT_NAME,
    T2I_PROJECT_DESCRIPTION,
    T2I_PROJECT_GUIDELINES,
    T2I_PROJECT_NAME,
)

PAIRS_PER_TASK = 12
VOTED_SHARE = 2 / 3  # of each project's items, judged by the three demo annotators
DEMO_VOTERS = ("annotator1", "annotator2", "annotator3")  # human_annotations[0..2]


@dataclass(frozen=True)
class GenerationProject:
    slug: str
    name: str
    description: str
    guidelines: str
    tasks: tuple[str, ...]
    graded_tasks: tuple[str, ...] = ()  # domains asking a letter grade of each response

    @property
    def item_count(self) -> int:
        return PAIRS_PER_TASK * len(self.tasks)


GENERATION_PROJECTS = (
    GenerationProject(
        "demo-t2i",
        T2I_PROJECT_NAME,
        T2I_PROJECT_DESCRIPTION,
        T2I_PROJECT_GUIDELINES,
        ("t2i", "edit"),
    ),
    GenerationProject(
        "demo-interleaved",
        INTERLEAVED_PROJECT_NAME,
        INTERLEAVED_PROJECT_DESCRIPTION,
        INTERLEAVED_PROJECT_GUIDELINES,
        ("interleaved",),
        graded_tasks=("interleaved",),
    ),
)


def seed_generation_projects(users: dict, folder: Path, ensure_memberships) -> list[DemoSeeded]:
    """Each generation demo project with its items and demo votes."""
    have = {p.slug: Item.objects.filter(project__slug=p.slug).count() for p in GENERATION_PROJECTS}
    files: dict[str, Path] = {}
    if any(have[p.slug] < p.item_count for p in GENERATION_PROJECTS):
        # Drawn (CPU only, ~1 s) before any transaction, as the MRB demo's.
        pairs = build_generation_pairs(GENERATION_SEED)
        assert all(len(task_pairs) == PAIRS_PER_TASK for task_pairs in pairs.values())
        files = write_mmrb2_tasks(pairs, folder)
    seeded = []
    for spec in GENERATION_PROJECTS:
        with transaction.atomic():
            project = _ensure_project(spec, created_by=users["admin"])
            ensure_memberships(project, users)
            created = 0
            if have[spec.slug] < spec.item_count:
                created = _import(project, spec, files)
            votes = 0
            if not Assignment.objects.filter(item__project=project).exists():
                votes = cast_demo_votes(project, users, round(spec.item_count * VOTED_SHARE))
        seeded.append(DemoSeeded(project, created, votes))
    return seeded


def _ensure_project(spec: GenerationProject, *, created_by) -> Project:
    project, _ = Project.objects.get_or_create(
        slug=spec.slug,
        defaults={
            "name": spec.name,
            "description": spec.description,
            "guidelines": spec.guidelines,
            "licence": "CC0-1.0 (synthetic demo data)",
            "seed": GENERATION_SEED,
            "preference_scale": PreferenceScale.GRADED6,
            # A split goes to the curation queue at once (three demo annotators).
            "escalation_votes": 0,
            "created_by": created_by,
        },
    )
    for task in spec.tasks:
        new = not Domain.objects.filter(project=project, slug=f"mmrb2-{task}").exists()
        domain = task_domain(project, task)
        if new and task in spec.graded_tasks:
            domain.asks_grade = True
            domain.save(update_fields=["asks_grade"])
        project.domains.filter(pk=domain.pk, guidelines="").update(
            guidelines=GENERATION_DOMAIN_GUIDELINES[task]
        )
    return project


def _import(project: Project, spec: GenerationProject, files: dict[str, Path]) -> int:
    created = 0
    for task in spec.tasks:
        try:
            created += import_mmrb2_from_paths(project=project, dataset=files[task]).created
        except ImportFailed as exc:
            raise CommandError(
                f"the demo's {task} pairs could not be imported (was the project "
                f"'{project.slug}' changed?):\n{exc}"
            ) from None
    return created


def demo_vote(item: Item, voter: int, scale: str) -> Vote:
    """The vote of the `voter`-th demo annotator: the pair's published
    human_annotations[voter] (A = response 1), and its letter grades when the
    domain asks them."""
    meta = item.meta["mmrb2"]
    strength = scales.strength_of_value(meta["human_annotations"][voter], scale)
    grade_1 = grade_2 = ""
    if item.domain.asks_grade:
        grade_1, grade_2 = json.loads(meta["fields"])["prompt_metadata"]["grades"][voter]
    return Vote(
        choice=scales.choice_of(strength), strength=strength, grade_1=grade_1, grade_2=grade_2
    )


def cast_demo_votes(project: Project, users: dict, per_annotator: int) -> int:
    """Each demo annotator claims and judges `per_annotator` items in the
    project's claim order (the second and third get the first one's items
    first: fewest missing votes first)."""
    cast = 0
    for voter, username in enumerate(DEMO_VOTERS):
        user = users[username]
        for _ in range(per_annotator):
            assignment = claim_next_item(project=project, annotator=user)
            if assignment is None:
                break
            vote = demo_vote(assignment.item, voter, project.preference_scale)
            submit_judgement(assignment_id=assignment.pk, annotator=user, vote=vote)
            cast += 1
    return cast
