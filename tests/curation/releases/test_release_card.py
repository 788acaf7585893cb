"""Issue 30: a release describes what it holds in its own terms. The card
and manifest of an MMRB2 release state pairs per task and `prompt_source`,
graded alpha (ordinal, interval, binary collapse) with bootstrap intervals,
the consensus rule, decisions and how `human_annotations` were written; a
mixed release has a section per format; provenance counts equal
provenance.jsonl; imported gold is "imported gold"; escalation is mentioned
only when it happened."""

from __future__ import annotations

import json
from collections import Counter
from datetime import timedelta
from pathlib import Path

import krippendorff
import pytest
from django.urls import reverse
from django.utils import timezone

from annotate.importing.service import import_items_from_paths
from annotate.models import Item, Judgement
from curation.agreement import graded, reports
from curation.models import Verdict
from tests.curation.releases.test_release_import import new_project
from tests.curation.releases.test_release_mmrb2_votes import (
    MINDCUBE,
    T2I_1,
    T2I_2,
    VSTAR,
    graded_project,
    release_of,
    vote,
)
from tests.curation.releases.test_releases import built, make_release_project, media
from tests.factories import make_member, make_user

pytestmark = pytest.mark.django_db

TASKS = ("t2i", "edit", "interleaved", "reasoning")
# Three annotators' strengths per pair: every pair has some disagreement, so
# every bootstrap resample has variation and the intervals are defined.
STRENGTHS = {
    T2I_1: (3, 1, -2),
    T2I_2: (3, 2, 2),
    "emu_edit_9_a_b": (-1, -3, -2),
    "isg_3": (2, -1, 3),
    MINDCUBE: (1, 2, -1),
    VSTAR: (-3, -2, 1),
}


def voted_four_task_project(tmp_path: Path):
    """The four-task MMRB2 fixture, graded6, three graded votes on every pair
    (letter grades on reasoning), a consensus rule, one pair decided by a
    curator."""
    project = graded_project(tmp_path, tasks=TASKS)
    project.consensus_strength = 1.5
    project.save(update_fields=["consensus_strength"])
    t0 = timezone.now() - timedelta(hours=1)
    annotators = [make_member(project, make_user(f"g{n}"), pseudonym=f"g{n}") for n in range(3)]
    for ext_id, strengths in STRENGTHS.items():
        item = Item.objects.get(project=project, external_id=ext_id)
        grades = ("A", "B") if ext_id in (MINDCUBE, VSTAR) else ("", "")
        for n, (user, strength) in enumerate(zip(annotators, strengths, strict=True)):
            vote(item, user, t0 + timedelta(minutes=n), strength=strength, grades=grades)
    return project


def provenance_lines(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "provenance.jsonl").read_text().splitlines()]


def test_an_mmrb2_release_describes_itself_in_mmrb2_terms(client, tmp_path):
    project = voted_four_task_project(tmp_path)
    release, folder = release_of(project, domains=["mmrb2-t2i", "mmrb2-edit"])
    card = (folder / "README.md").read_text()
    manifest = release.manifest
    # Nothing in Multimodal RewardBench terms: it has no such record.
    for wrong in (
        "0 records",
        "Multimodal RewardBench format",
        "Sub-buckets",
        "Output1 better",
        "Decision provenance: .",
        "escalated",
        "load_dataset",
    ):
        assert wrong not in card, wrong
    assert manifest["formats"] == ["mmrb2"]
    assert "## Contents\n\n3 pairs in 2 task files in the Multimodal RewardBench 2 layout" in card
    assert "| MMRB2 text-to-image | `mmrb2/t2i.json` | 2 | 2 | genai: 1, oneigbench: 1 |" in card
    assert "| MMRB2 image editing | `mmrb2/edit.json` | 1 | 1 | emu-edit: 1 |" in card
    t2i = manifest["mmrb2"]["tasks"]["t2i"]
    assert t2i["prompt_source"] == {"genai": 1, "oneigbench": 1}
    assert t2i["provenance"] == {"adjudicated": 1, "unanimous": 1}
    assert t2i["human_annotations_from_votes"] == 2
    # The rule that wrote human_annotations, from what happened.
    rule = manifest["mmrb2"]["human_annotations_rule"]
    assert rule.startswith("written for 3 pairs from the studio's graded votes")
    assert "keep the imported value" not in rule  # every pair had votes
    assert f"`human_annotations`: {rule}" in card
    # The consensus rule in force, and the decisions.
    assert "- Consensus rule: an item is agreed only when every vote is on one side and " in card
    assert "their mean strength is at least 1.5" in card
    assert "- Decisions: agreed by the rule, unanimous: 2, decided by a curator: 1." in card
    # The release page says the same.
    client.force_login(make_member(project, role="curator"))
    page = client.get(reverse("release_detail", args=[project.slug, release.pk])).content.decode()
    # (sorted: PostgreSQL's jsonb keeps the manifest's keys in its own order)
    assert "genai: 1, oneigbench: 1" in page and "adjudicated: 1, unanimous: 1" in page
    assert "Sub-buckets" not in page


def test_provenance_counts_in_the_manifest_are_those_of_the_file(tmp_path):
    project = voted_four_task_project(tmp_path)
    for domains in (["mmrb2-t2i", "mmrb2-edit"], None):
        release, folder = release_of(project, domains=domains, version=f"v{bool(domains)}")
        counted = Counter(line["provenance"] for line in provenance_lines(folder))
        assert release.manifest["provenance"] == dict(sorted(counted.items()))
        assert sum(counted.values()) == release.manifest["members_total"]
        card = (folder / "README.md").read_text()
        listed = ", ".join(f"{k}: {v}" for k, v in sorted(counted.items()))
        assert f"Decision provenance: {listed}." in card
    mrb = built(make_release_project(tmp_path))
    counted = Counter(line["provenance"] for line in provenance_lines(media(mrb.folder)))
    assert mrb.manifest["provenance"] == dict(sorted(counted.items()))


def test_graded_alpha_and_intervals_in_manifest_and_card_are_the_dashboards(tmp_path):
    project = voted_four_task_project(tmp_path)
    release, folder = release_of(project)
    card = (folder / "README.md").read_text()
    seed = reports.bootstrap_seed(project)
    for task in TASKS:
        slug = f"mmrb2-{task}"
        rows = Judgement.objects.filter(
            assignment__item__domain__slug=slug, is_current=True
        ).values_list("assignment__item_id", "strength")
        _, counts = graded.value_matrix(list(rows), "graded6")
        entry = release.manifest["agreement"][slug]
        for level in ("ordinal", "interval"):
            expected = krippendorff.alpha(
                value_counts=counts, value_domain=range(1, 7), level_of_measurement=level
            )
            got = entry["graded"][level]
            assert got["alpha_value"] == pytest.approx(expected, abs=1e-9)
            ci = graded.bootstrap_graded_ci(
                counts, "graded6", level, n_resamples=reports.BOOTSTRAP_RESAMPLES, seed=seed
            )
            assert got["ci95"] == {"low": ci.low, "high": ci.high}
            assert got["ci"] == f"[{ci.low:.3f}, {ci.high:.3f}]"
        g = entry["graded"]
        title = {"t2i": "text-to-image", "edit": "image editing"}.get(task)
        if title:
            assert (
                f"| MMRB2 {title} | {g['n_values']} | {g['ordinal']['alpha']} | "
                f"{g['ordinal']['ci']} | {g['interval']['alpha']} | {g['interval']['ci']} | "
                f"{entry['alpha']} | {entry['ci']} |"
            ) in card
    assert "ordinal and interval" in release.manifest["agreement_bootstrap"]["method"]


def test_a_mixed_release_has_one_section_per_format(tmp_path):
    project = voted_four_task_project(tmp_path)
    release, folder = release_of(project)
    card = (folder / "README.md").read_text()
    assert release.manifest["formats"] == ["multimodal-rewardbench", "mmrb2"]
    assert (
        "in two formats: 1 record in the Multimodal RewardBench format (`ID, Text, Image, "
        "Output1, Output2, Better, Category`) and 6 pairs in Multimodal RewardBench 2 task "
        "files." in card
    )
    assert "## Multimodal RewardBench records\n\n1 record. Which slot" in card
    assert "## Multimodal RewardBench 2 task files" in card
    assert "1 of them, with text responses to one prompt image, is also a Multimodal " in card
    # The MRB table lists the domain with records, not the image-only tasks.
    mrb_table = card.split("## Multimodal RewardBench records", 1)[1].split("##", 1)[0]
    assert "`mmrb2/reasoning`" in mrb_table and "`mmrb2/t2i`" not in mrb_table
    # An MRB release has no MMRB2 section.
    mrb = built(make_release_project(tmp_path))
    mrb_card = (media(mrb.folder) / "README.md").read_text()
    assert "Multimodal RewardBench 2" not in mrb_card and "formats" not in mrb.manifest


def test_gold_imported_from_a_release_is_imported_gold_not_agreed_by_the_rule(tmp_path):
    first = built(make_release_project(tmp_path))
    copy = new_project()
    import_items_from_paths(project=copy, dataset=media(first.archive))
    card = (media(built(copy).folder) / "README.md").read_text()
    n = Verdict.objects.filter(project=copy, provenance="gold").count()
    assert n == first.manifest["total"]
    assert "- Items agreed by the rule: 0; adjudicated by a curator: 0 (0.0%); " in card
    assert f"imported gold: {n} (imported from release {first.project.slug} v1.0)" in card
    # No votes were collected here: no sentence about votes, display order or escalation.
    assert "- No votes were collected in the studio for these items." in card
    for wrong in ("Votes per item", "Display order was randomised", "escalated"):
        assert wrong not in card


def test_escalation_is_mentioned_only_when_an_item_was_escalated(tmp_path):
    project = make_release_project(tmp_path)
    card = (media(built(project).folder) / "README.md").read_text()
    assert "- Votes per item: 3.\n" in card and "escalated" not in card
    escalated = [
        Verdict.objects.filter(project=project, status=status).values_list("pk", flat=True)[0]
        for status in ("agreed", "resolved")
    ]
    Verdict.objects.filter(pk__in=escalated).update(escalations=1)
    card = (media(built(project, "v2").folder) / "README.md").read_text()
    assert "- Votes per item: 3 (2 split items escalated for up to 2 more).\n" in card
