"""Votes stay blind through escalation: Revise is offered on the same terms
whatever the others voted, so an item escalated because they disagreed does
not bring an annotator's Revise button back."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotate.loop.service import AnnotationError, Vote, can_revise, revise_judgement
from annotate.models import Item
from tests.curation.verdicts.test_verdicts import new_item, verdict, vote_on

pytestmark = pytest.mark.django_db


def revise_offered(client, user, item) -> bool:
    assignment = user.assignments.get(item=item)
    client.force_login(user)
    page = client.get(reverse("work_item", args=[assignment.pk])).content.decode()
    return 'name="revise"' in page


@pytest.mark.parametrize("others", [("1", "1"), ("2", "2")])
def test_revise_is_gone_once_the_item_had_its_votes_whatever_the_others_chose(client, others):
    project, item = new_item()  # 3 votes per item
    first = vote_on(project, item, "1")
    assert revise_offered(client, first, item)  # still waiting: offered
    for choice in others:
        vote_on(project, item, choice)
    item.refresh_from_db()
    escalated = verdict(item).escalations == 1
    assert escalated == (others == ("2", "2")) and item.votes_needed == (5 if escalated else 3)
    # Agreed or escalated for more votes, the first voter sees the same page.
    assert not can_revise(Item.objects.select_related("project").get(pk=item.pk))
    assert not revise_offered(client, first, item)
    with pytest.raises(AnnotationError):
        revise_judgement(
            assignment_id=first.assignments.get().pk, annotator=first, vote=Vote(choice="2")
        )
