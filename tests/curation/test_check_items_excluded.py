"""Issue 36: qualification and check items count in no statistic and no
output. A project's agreement, verdicts, release selection and manifest
figures, data grid, exports, progress counters, label-quality votes and
members' agreement are the same before and after check items and
qualification items (with votes on the checks) are added to it."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotate.loop import page
from annotate.loop.service import Vote, claim_next_item, submit_judgement
from annotate.models import ItemPurpose, Project
from annotate.setup.people import member_rows
from curation.agreement import reports
from curation.exports.service import export_rows
from curation.models import Verdict
from curation.quality.service import current_votes
from curation.releases import manifest_sections
from curation.releases.service import included_verdicts
from tests.factories import make_assignment, make_item, make_member, make_project

pytestmark = pytest.mark.django_db

CHOICES = ["1", "1", "2", "1", "2", "2", "2", "1", "1", "2", "1", "1"]


# The progress line's figures of the annotator's own (their votes on checks
# count there: they must not tell which items were checks).
OWN = ("mine", "left", "judged", "held", "open")


def vote(choice):
    return Vote(choice=choice, correct_1="yes", correct_2="no", confidence=2)


def voted_project() -> tuple[Project, list, object]:
    """Eight benchmark items, each voted by three annotators (through the
    claim and the vote, so tallies, verdicts and counters are genuine)."""
    project = make_project(votes_per_item=3, check_rate=0.0)
    for _ in range(8):
        make_item(project)
    annotators = [make_member(project) for _ in range(3)]
    n = 0
    for user in annotators:
        while (a := claim_next_item(project=project, annotator=user)) is not None:
            submit_judgement(assignment_id=a.pk, annotator=user, vote=vote(CHOICES[n % 12]))
            n += 1
    curator = make_member(project, role="curator")
    return project, annotators, curator


def add_gates(project, annotators) -> None:
    """Check items (gold and attention) voted on by every annotator, some
    wrongly, and qualification items nobody votes on here."""
    checks = [
        make_item(project, purpose=ItemPurpose.CHECK, gold_choice="1"),
        make_item(project, purpose=ItemPurpose.CHECK, gold_choice="2", is_attention=True),
        make_item(project, purpose=ItemPurpose.CHECK, gold_choice="1", model_1="m1"),
    ]
    make_item(project, purpose=ItemPurpose.QUALIFICATION, gold_choice="2", explanation="why")
    for k, user in enumerate(annotators):
        for j, item in enumerate(checks):
            a = make_assignment(item, user)
            submit_judgement(assignment_id=a.pk, annotator=user, vote=vote(CHOICES[k + j]))


def figures(project, annotators, curator) -> dict:
    """Every statistic and output, keyed by what does not change (item ids
    are the same items before and after)."""
    domains = list(project.domains.all())
    slugs = [d.slug for d in domains]
    votes, domain_of = reports.project_votes(project)
    progress = page.progress(project, annotators[0])
    client = APIClient()
    client.force_authenticate(curator)
    grid = client.get(reverse("api_items", args=[project.slug]), {"page_size": 100}).json()
    return {
        "votes": (votes, domain_of),
        "summaries": reports.domain_summaries(project),
        "tallies": reports.tally_patterns(project),
        "expensive": reports.compute_expensive(project, seed=7),
        "verdicts": sorted(
            Verdict.objects.filter(project=project).values_list("item_id", "status", "final_choice")
        ),
        "release": sorted(included_verdicts(project, slugs).values_list("item_id", flat=True)),
        "manifest_votes": manifest_sections.agreement(project, domains),
        "grid": grid,
        "export_votes": list(export_rows(project=project, kind="votes")),
        "export_verdicts": list(export_rows(project=project, kind="verdicts")),
        "progress": {k: v for k, v in progress.items() if k not in OWN},
        "reference_progress": {
            k: v for k, v in page.reference_progress(project, annotators[0]).items() if k not in OWN
        },
        "label_quality_votes": sorted(current_votes(project)),
        "members": [(r.membership.user_id, r.comparable, r.agreeing) for r in member_rows(project)],
    }


def test_check_and_qualification_items_change_no_statistic_and_no_output():
    project, annotators, curator = voted_project()
    before = figures(project, annotators, curator)
    assert before["votes"][0] and before["release"] is not None and before["grid"]["count"] == 8
    add_gates(project, annotators)
    after = figures(project, annotators, curator)
    for key in before:
        assert after[key] == before[key], key
