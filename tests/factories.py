"""Plain factory functions for tests: make_* with sensible defaults."""

from __future__ import annotations

import hashlib
import io
import itertools
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db.models import F
from django.utils import timezone
from PIL import Image

from annotate.models import (
    Assignment,
    AssignmentStatus,
    Domain,
    ImageAsset,
    Item,
    Judgement,
    JudgementSlot,
    MediaAsset,
    Membership,
    Project,
    image_part,
    text_part,
    write_item_content,
)

_seq = itertools.count(1)


def make_user(username: str | None = None, **kwargs):
    username = username or f"user{next(_seq)}"
    return get_user_model().objects.create_user(username=username, password="pw", **kwargs)


def make_project(slug: str | None = None, **kwargs) -> Project:
    n = next(_seq)
    project = Project.objects.create(
        slug=slug or f"project-{n}", name=kwargs.pop("name", f"Project {n}"), **kwargs
    )
    project.create_default_domains()
    return project


def make_member(project: Project, user=None, role: str = "annotator", **kwargs):
    user = user or make_user()
    Membership.objects.create(project=project, user=user, role=role, **kwargs)
    return user


def png_bytes(size=(32, 24), color=(200, 30, 30), fmt="PNG") -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, format=fmt)
    return out.getvalue()


def make_image(**kwargs) -> ImageAsset:
    data = png_bytes(color=(next(_seq) % 256, 10, 10))
    sha = hashlib.sha256(data).hexdigest()
    return ImageAsset.objects.create(
        sha256=sha,
        file=f"images/{sha[:2]}/{sha}.png",
        format="PNG",
        width=32,
        height=24,
        size_bytes=len(data),
        **kwargs,
    )


def make_media(kind: str = "video", **kwargs) -> MediaAsset:
    """A MediaAsset row (no file is written: tests that serve or decode it
    store their own bytes under `file`)."""
    sha = hashlib.sha256(f"media {next(_seq)}".encode()).hexdigest()
    video = kind == "video"
    fields = {
        "sha256": sha,
        "kind": kind,
        "file": f"media/{sha[:2]}/{sha}.{'mp4' if video else 'wav'}",
        "container": "mp4" if video else "wav",
        "content_type": "video/mp4" if video else "audio/wav",
        "video_codec": "h264" if video else "",
        "audio_codec": "" if video else "pcm_s16le",
        "duration_ms": 2000,
        "width": 64 if video else 0,
        "height": 48 if video else 0,
        "fps": 25.0 if video else None,
        "sample_rate": 0 if video else 16000,
        "channels": 0 if video else 1,
        "size_bytes": 1000,
    }
    fields.update(kwargs)
    return MediaAsset.objects.create(**fields)


def make_item(project: Project | None = None, domain: Domain | None = None, **kwargs) -> Item:
    project = project or (domain.project if domain else make_project())
    domain = domain or project.domains.get(slug="vqa")
    n = next(_seq)
    fields = {
        "external_id": f"item_{n}",
        "prompt": f"What is in image {n}?",
        "image_path": f"src/{n}.png",
        "response_1": "A red square.",
        "response_2": "A blue circle.",
        "content_hash": hashlib.sha256(str(n).encode()).hexdigest(),
        # Qualification and check items collect no benchmark votes (issue 36).
        "votes_needed": project.votes_per_item
        if kwargs.get("purpose", "benchmark") == "benchmark"
        else 0,
    }
    fields.update(kwargs)
    if "image" not in fields:
        fields["image"] = make_image()
    # The content is the parts (issue 32): an image makes the MRB shape.
    content = {name: fields.pop(name) for name in CONTENT_FIELDS}
    item = Item.objects.create(project=project, domain=domain, **fields)
    image = content["image"]
    prompt = [text_part(content["prompt"])]
    if image is not None:
        prompt.insert(0, image_part(image.pk, content["image_path"]))
    write_item_content(
        item, prompt, [[text_part(content["response_1"])], [text_part(content["response_2"])]]
    )
    return item


CONTENT_FIELDS = ("prompt", "image", "image_path", "response_1", "response_2")


def make_assignment(item: Item, annotator=None, **kwargs) -> Assignment:
    now = timezone.now()
    fields = {
        "display_order": "12",
        "claimed_at": now,
        "lease_expires_at": now + timedelta(minutes=30),
    }
    # Tests written for pairs say shown_swapped=True/False (response 2 on the left).
    if "shown_swapped" in kwargs:
        fields["display_order"] = "21" if kwargs.pop("shown_swapped") else "12"
    fields.update(kwargs)
    return Assignment.objects.create(item=item, annotator=annotator or make_user(), **fields)


def make_judgement(assignment: Assignment, choice: str = "1", **kwargs) -> Judgement:
    """A judgement row; a current one is counted in its item's tallies, as
    annotate.loop.service counts a vote (the dashboard reads only the tallies).
    A pair's per-slot answers may be given as correct_1/2 and grade_1/2: they
    become JudgementSlot rows (issue 32), and the judgement comes back with
    them as attributes, as Judgement.objects.with_pair_answers() reads it."""
    answers = {
        name: kwargs.pop(name, "") for name in ("correct_1", "correct_2", "grade_1", "grade_2")
    }
    judgement = Judgement.objects.create(assignment=assignment, choice=choice, **kwargs)
    for slot in (1, 2):
        correctness, grade = answers[f"correct_{slot}"], answers[f"grade_{slot}"]
        if correctness or grade:
            JudgementSlot.objects.create(
                judgement=judgement, slot=slot, correctness=correctness, grade=grade
            )
    for name, value in answers.items():
        setattr(judgement, name, value)
    if assignment.status == AssignmentStatus.OPEN:
        # A judged assignment is no longer an open lease (a curator's decision
        # ends open leases).
        now = timezone.now()
        Assignment.objects.filter(pk=assignment.pk).update(
            status=AssignmentStatus.SUBMITTED, submitted_at=now
        )
        assignment.status, assignment.submitted_at = AssignmentStatus.SUBMITTED, now
    if judgement.is_current:
        columns = [{"1": "votes_1", "2": "votes_2", "tie": "votes_tie"}.get(choice)]
        columns += [
            f"correct_{response}_{label}"
            for response, label in (("1", answers["correct_1"]), ("2", answers["correct_2"]))
            if label in ("yes", "no", "unsure")
        ]
        # Values the constraint tests feed in on purpose have no tally column.
        Item.objects.filter(pk=assignment.item_id).update(
            **{column: F(column) + 1 for column in columns if column}
        )
    return judgement


# One valid importer record of each format, fields overridable.
def mrb_record(external_id: str = "vqa_1", **overrides) -> dict:
    record = {
        "ID": external_id,
        "Text": f"What is shown in {external_id}?",
        "Image": "images/red.png",
        "Output1": "A red square.",
        "Output2": "A blue circle.",
        "Better": "Output1",
        "Category": "vqa",
    }
    record.update(overrides)
    return record


def pairs_record(external_id: str = "pairs_1", **overrides) -> dict:
    record = {
        "id": external_id,
        "prompt": f"What is shown in {external_id}?",
        "chosen": f"chosen answer for {external_id}",
        "rejected": f"rejected answer for {external_id}",
        "image": "images/red.png",
        "category": "vqa",
    }
    record.update(overrides)
    return record
