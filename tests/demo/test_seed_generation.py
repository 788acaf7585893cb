"""`manage.py seed_demo`'s generation demo projects (issue 24 item 6): a
text-to-image and editing project and an interleaved one on MMRB2's
six-point scale, imported through the real MMRB2 import, with the demo
annotators' graded votes, idempotent, and their compare pages rendering
their pictures to an annotator."""

import hashlib
import io
import json
import re

import krippendorff
import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse

from annotate.importing.formats.mmrb2 import demo as generation_demo
from annotate.models import (
    Assignment,
    ImageAsset,
    Item,
    ItemPart,
    Judgement,
    Membership,
    Project,
)
from curation.agreement import reports
from demo.generation import build_generation_pairs

pytestmark = pytest.mark.django_db

PROJECTS = {"demo-t2i": ("t2i", "edit"), "demo-interleaved": ("interleaved",)}


@pytest.fixture(scope="module")
def generated():
    pairs = build_generation_pairs()
    return {pair.external_id: pair for task_pairs in pairs.values() for pair in task_pairs}


def row_counts() -> dict[str, int]:
    return {
        model.__name__: model.objects.count()
        for model in (Project, Membership, Item, ItemPart, ImageAsset, Assignment, Judgement)
    }


def test_the_generation_projects_hold_the_drawn_pairs_and_graded_demo_votes(generated, monkeypatch):
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    printed = out.getvalue()
    demo_roles = set(
        Membership.objects.filter(project__slug="demo").values_list(
            "user__username", "role", "pseudonym"
        )
    )
    for slug, tasks in PROJECTS.items():
        project = Project.objects.get(slug=slug)
        assert project.preference_scale == "graded6" and project.is_graded
        assert f"/p/{slug}/" in printed
        # The MRB demo's accounts, with the same roles and pseudonyms.
        roles = set(project.memberships.values_list("user__username", "role", "pseudonym"))
        assert roles == demo_roles
        domains = {d.slug: d for d in project.domains.all()}
        assert sorted(domains) == sorted(f"mmrb2-{task}" for task in tasks)
        assert all(d.guidelines for d in domains.values())
        assert domains.get("mmrb2-interleaved", domains[f"mmrb2-{tasks[0]}"]).asks_grade == (
            slug == "demo-interleaved"
        )
        items = list(project.items.select_related("domain"))
        assert len(items) == 12 * len(tasks)
        for item in items:
            pair = generated[item.external_id]
            assert item.domain.slug == f"mmrb2-{pair.task}"
            assert item.meta["mmrb2"]["human_annotations"] == pair.human_annotations
            assert (item.model_1, item.model_2) == (pair.model_a, pair.model_b)
            # Parts in order, each picture the very bytes drawn for its path.
            parts = list(item.content_parts.select_related("image").order_by("slot", "position"))
            record = pair.record()
            expected = {
                "prompt": record["prompt_content"],
                "response_1": record["response_a"]["response_content"],
                "response_2": record["response_b"]["response_content"],
            }
            for slot, content in expected.items():
                mine = [p for p in parts if p.slot == slot]
                assert [p.position for p in mine] == list(range(len(content)))
                for part, (kind, value) in zip(mine, content, strict=True):
                    assert part.kind == kind
                    if kind == "image":
                        assert part.source_path == value
                        digest = hashlib.sha256(pair.images[value]).hexdigest()
                        assert part.image.sha256 == digest
                    else:
                        assert part.text == value
            assert any(p.kind == "image" for p in parts if p.slot == "response_1")

        # Two thirds of the items judged by the three demo annotators, each
        # vote the pair's human_annotations[k] for annotator k+1.
        judgements = list(
            Judgement.objects.with_pair_answers()
            .filter(assignment__item__project=project)
            .select_related("assignment__annotator", "assignment__item__domain")
        )
        voted = {j.assignment.item_id for j in judgements}
        assert len(voted) == len(items) * 2 // 3 and len(judgements) == 3 * len(voted)
        to_value = {3: 6, 2: 5, 1: 4, -1: 3, -2: 2, -3: 1}
        for j in judgements:
            k = int(j.assignment.annotator.username.removeprefix("annotator")) - 1
            item = j.assignment.item
            assert to_value[j.strength] == item.meta["mmrb2"]["human_annotations"][k]
            assert j.choice == ("1" if j.strength > 0 else "2")
            if item.domain.asks_grade:
                grades = generated[item.external_id].prompt_metadata["grades"][k]
                assert [j.grade_1, j.grade_2] == grades
            else:
                assert (j.grade_1, j.grade_2) == ("", "")

        # The agreement page's ordinal alpha is krippendorff's on the votes.
        annotators = sorted({j.assignment.annotator_id for j in judgements})
        units = sorted(voted)
        data = np.full((len(annotators), len(units)), np.nan)
        for j in judgements:
            row, column = (
                annotators.index(j.assignment.annotator_id),
                units.index(j.assignment.item_id),
            )
            data[row, column] = to_value[j.strength]
        expected_alpha = krippendorff.alpha(
            reliability_data=data, value_domain=range(1, 7), level_of_measurement="ordinal"
        )
        total = next(g for g in reports.build_report(project).graded if g.key == "all")
        assert total.reliability.ordinal == pytest.approx(expected_alpha, abs=1e-9)
        assert 0.3 < expected_alpha < 1  # the annotators mostly agree, not always

    # A second run generates nothing and changes nothing.
    before = row_counts()

    def must_not_generate(*args, **kwargs):
        raise AssertionError("seed_demo drew the generation pairs again")

    monkeypatch.setattr(generation_demo, "build_generation_pairs", must_not_generate)
    again = io.StringIO()
    call_command("seed_demo", stdout=again)
    assert row_counts() == before
    assert again.getvalue().count("nothing new") == 6  # the six demo projects


def test_a_partly_deleted_generation_project_is_completed_without_new_votes():
    call_command("seed_demo", stdout=io.StringIO())
    project = Project.objects.get(slug="demo-t2i")
    votes = Judgement.objects.filter(assignment__item__project=project).count()
    unvoted = project.items.filter(assignments__isnull=True).order_by("pk")[:2]
    Item.objects.filter(pk__in=[i.pk for i in unvoted]).delete()
    assert project.items.count() == 22

    call_command("seed_demo", stdout=io.StringIO())

    assert project.items.count() == 24
    assert Judgement.objects.filter(assignment__item__project=project).count() == votes


@pytest.mark.parametrize("slug", sorted(PROJECTS))
def test_the_compare_page_shows_the_pictures_to_an_annotator(client, slug):
    call_command("seed_demo", stdout=io.StringIO())
    project = Project.objects.get(slug=slug)
    user = project.memberships.get(pseudonym="A1").user
    client.force_login(user)
    response = client.post(reverse("work_start", args=[slug]))
    assert response.status_code == 302
    page = client.get(response["Location"])
    assert page.status_code == 200
    html = page.content.decode()
    assignment = Assignment.objects.get(annotator=user, item__project=project, status="open")
    item = assignment.item
    images = set(item.content_parts.filter(kind="image").values_list("image__file", flat=True))
    shown = set(re.findall(r'<img[^>]* src="/media/([^"]+)"', html))
    assert images and images <= shown
    for name in images:  # served to this member (response pictures are parts only)
        assert client.get(f"/media/{name}").status_code == 200
    for secret in (item.external_id, item.model_1, item.model_2, "human_annotations"):
        assert secret not in html
    points = re.findall(r'name="strength"', html)
    assert len(points) == 6  # the graded six-point scale
    # The interleaved domain asks a letter grade of each response.
    assert html.count('class="correctness grade') == (2 if slug == "demo-interleaved" else 0)
    meta = json.loads(item.meta["mmrb2"]["fields"])
    assert meta["prompt_metadata"]["defect"] not in html
