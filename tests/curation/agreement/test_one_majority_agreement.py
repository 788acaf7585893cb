"""Issue 31: "agrees with the majority" has one definition (leave-one-out,
strict majority of the others) and the members page and the agreement page
show the same figure for the same person, written the same way."""

import random
import re

import pytest
from django.urls import reverse

from annotate.loop.service import Vote, claim_next_item, revise_judgement, submit_judgement
from annotate.models import Assignment
from tests.factories import make_item, make_member, make_project, make_user

pytestmark = pytest.mark.django_db


def cell(html: str, name: str, column_marker: str) -> str:
    """The 'agrees with the majority' cell text of `name`'s row."""
    row = re.search(rf"<tr[^>]*>\s*<td>{re.escape(name)}.*?</tr>", html, re.S)
    assert row, name
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(0), re.S)
    text = [re.sub(r"<[^>]+>", "", c).strip() for c in cells]
    hits = [t for t in text if re.fullmatch(r"\d+\.\d%\s*\(\d+/\d+\)", t)]
    assert len(hits) == 1, (column_marker, text)
    return re.sub(r"\s+", " ", hits[0])


def test_members_and_agreement_pages_show_the_same_majority_agreement(client):
    rng = random.Random(31)
    project = make_project(votes_per_item=3, allow_tie=True)
    domain = project.domains.get(slug="general_preference")
    for _ in range(14):
        make_item(project, domain=domain)
    annotators = [
        make_member(project, user=make_user(f"ann{n}"), pseudonym=f"P{n}") for n in range(5)
    ]
    # Votes through the service (tallies kept as in production), with ties,
    # 1-1-1 splits and a revision.
    for user in annotators:
        while (a := claim_next_item(project=project, annotator=user)) is not None:
            choice = rng.choice(["1", "1", "2", "tie"])
            submit_judgement(
                assignment_id=a.pk, annotator=user, vote=Vote(choice=choice, rationale="why")
            )
        if user == annotators[0]:  # revised while its items still wait for votes
            a = Assignment.objects.filter(annotator=user, status="submitted").first()
            revise_judgement(
                assignment_id=a.pk, annotator=user, vote=Vote(choice="2", rationale="changed")
            )
    admin = make_member(project, user=make_user("boss"), role="admin")
    client.force_login(admin)
    members = client.get(reverse("members", args=[project.slug])).content.decode()
    agreement = client.get(reverse("agreement", args=[project.slug])).content.decode()
    assert "Agrees with the majority" in members and "Agrees with the majority" in agreement
    seen = 0
    for user in annotators:
        pseudonym = user.memberships.get().pseudonym
        if f"<td>{pseudonym}</td>" not in agreement:
            continue  # no vote (the pool ran dry before them)
        on_members = cell(members, user.username, "members")
        on_agreement = cell(agreement, pseudonym, "agreement")
        assert on_members == on_agreement, user.username
        seen += 1
    assert seen >= 3
