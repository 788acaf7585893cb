"""Issue 32 (the vote in slot terms): a project voted on through the public
services with a seeded display coin, and everything pairs make of its votes
(agreement tables, verdicts, the votes export, release files), normalised
for what depends on the clock or the database's ids. Recorded on main's code
before the change (vote_golden.json); the test holds the new code to it.

Run `python -m tests.curation.golden.vote_scenario` to see the snapshot
(regenerating the golden file is a deliberate act: see the test)."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import random
from pathlib import Path

from django.conf import settings

from annotate.importing.service import import_items_from_paths
from annotate.loop import scales, service
from annotate.loop.service import Vote, claim_next_item, revise_judgement, submit_judgement
from annotate.models import Domain, Item, Project
from curation.agreement.reports import annotators_csv, build_report, domains_csv
from curation.exports.records import COLUMNS
from curation.exports.service import export_rows
from curation.models import ReleaseStatus
from curation.releases.build import build_release
from curation.releases.service import create_release
from tests.factories import make_member, make_user

# What varies between runs of the same scenario: ids, times, durations.
VOTE_VARYING = {"vote_id", "assignment_id", "claimed_at", "submitted_at", "voted_at"}
VOTE_VARYING |= {"seconds_spent", "active_seconds"}
VERDICT_VARYING = {"item_id", "updated_at", "decided_by"}
TIMED = {"manifest.json", "README.md", "provenance.jsonl"}
TRAINING = ("dpo/", "parquet/", "trl/")


def _vote_for(item: Item, rng: random.Random, *, graded: bool) -> Vote:
    domain = item.domain
    if graded:
        strength = rng.choice(scales.POINTS[item.project.preference_scale])
        choice = scales.choice_of(strength)
    else:
        strength = None
        choice = rng.choices(["1", "2", "tie"], weights=[5, 3, 1])[0]
    labels = ("yes", "no", "unsure")
    c1 = rng.choice(labels) if domain.is_correctness else ""
    c2 = rng.choice(labels) if domain.is_correctness else ""
    g1 = rng.choice("ABC") if domain.asks_grade else ""
    g2 = rng.choice("ABC") if domain.asks_grade else ""
    return Vote(
        choice=choice,
        strength=strength,
        correct_1=c1,
        correct_2=c2,
        grade_1=g1,
        grade_2=g2,
        confidence=rng.choice([None, 1, 2, 3]),
        rationale="equal" if choice == "tie" else rng.choice(["", "clearer", "wrong count"]),
    )


def vote_all(project: Project, *, annotators: int, seed: int, graded: bool = False) -> None:
    """Every annotator claims and votes until nothing is left for them; the
    display order comes from a coin seeded with `seed`; the first annotator
    revises their first vote at once."""
    coin = service._coin
    service._coin = random.Random(seed + 1)
    try:
        _vote_all(project, annotators=annotators, seed=seed, graded=graded)
    finally:
        service._coin = coin


def _vote_all(project: Project, *, annotators: int, seed: int, graded: bool) -> None:
    rng = random.Random(seed)
    users = [
        make_member(project, make_user(f"{project.slug}-ann{n}"), pseudonym=f"P{n}")
        for n in range(annotators)
    ]
    for _round in range(30):
        for user in users:
            assignment = claim_next_item(project=project, annotator=user)
            if assignment is None:
                continue
            item = Item.objects.select_related("domain", "project").get(pk=assignment.item_id)
            submit_judgement(
                assignment_id=assignment.pk,
                annotator=user,
                vote=_vote_for(item, rng, graded=graded),
            )
            if _round == 0 and user == users[0]:  # a revision, while the item waits
                revise_judgement(
                    assignment_id=assignment.pk,
                    annotator=user,
                    vote=_vote_for(item, rng, graded=graded),
                )


def mrb_project(tmp_path: Path) -> Project:
    from tests.curation.releases.test_releases import PLAN, write_dataset

    project = Project.objects.create(slug="gold", name="Golden votes", seed=5, votes_per_item=3)
    project.create_default_domains()
    source = tmp_path / "source-gold"
    import_items_from_paths(project=project, dataset=write_dataset(source, PLAN), images=source)
    vote_all(project, annotators=4, seed=32)
    return project


def mmrb2_project(tmp_path: Path) -> Project:
    from annotate.importing.mmrb2 import import_mmrb2_from_paths

    from tests.annotate.importing.test_mmrb2 import published_fixture

    source = tmp_path / "src"
    published_fixture(source)
    project = Project.objects.create(
        slug="goldg", name="Golden graded", seed=3, preference_scale="graded6", votes_per_item=2
    )
    for task in ("t2i", "interleaved", "reasoning"):
        import_mmrb2_from_paths(project=project, dataset=source / f"{task}.json")
    Domain.objects.filter(project=project, slug="mmrb2-reasoning").update(asks_grade=True)
    vote_all(project, annotators=3, seed=33, graded=True)
    return project


def _export(project: Project, kind: str, varying: set[str]) -> list[dict]:
    names = [name for name, _ in COLUMNS[kind]]
    rows = []
    for row in export_rows(project=project, kind=kind):
        record = dict(zip(names, row, strict=True))
        # Issue 32 added the vote's task as the last column: every pair's is "pairwise".
        assert record.pop("task", "pairwise") == "pairwise"
        rows.append({k: v for k, v in record.items() if k not in varying})
    return rows


def _release(project: Project) -> dict:
    release = create_release(
        project=project,
        version="v1",
        notes="golden",
        domains=list(project.domains.values_list("slug", flat=True)),
        seed=11,
        user=None,
        enqueue=False,
    )
    release = build_release(release_id=release.pk)
    assert release.status == ReleaseStatus.READY, release.error
    folder = Path(settings.MEDIA_ROOT) / release.folder
    files = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if rel in TIMED or rel.startswith(TRAINING):
            continue
        files[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    provenance = [
        json.loads(line)
        for line in (folder / "provenance.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    return {"files": files, "provenance": provenance, "counts": release.counts}


def _without_column(text: str, name: str) -> list[list[str]]:
    rows = list(csv.reader(io.StringIO(text)))
    at = rows[0].index(name)
    return [row[:at] + row[at + 1 :] for row in rows]


def snapshot(project: Project) -> dict:
    report = build_report(project)
    return {
        "domains_csv": domains_csv(report),
        "annotators_csv": _without_column(annotators_csv(report), "median_seconds"),
        "verdicts": _export(project, "verdicts", VERDICT_VARYING),
        "votes": _export(project, "votes", VOTE_VARYING),
        "release": _release(project),
    }
