"""Issue 33: best-of-N and ranking projects lease their items with a display
order over all N responses (drawn on the server, stored), and their votes,
from the compare page, the REST API or the services, are stored in
canonical slot terms: JudgementSlot ranks 1..N by canonical slot (ties share
a rank), a pick as the canonical slot picked. Runs on SQLite and PostgreSQL
(the two statement paths)."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.loop import rules
from annotate.loop.service import (
    DisplayedVote,
    JudgementInvalid,
    claim_ahead,
    claim_next_item,
    revise_judgement,
    submit_judgement,
)
from annotate.models import Assignment, Judgement, Task, text_part, write_item_content
from tests.factories import make_item, make_member, make_project

pytestmark = pytest.mark.django_db


def n_item(project, n=4, domain=None):
    domain = domain or project.domains.get(slug="general_preference")
    item = make_item(project=project, domain=domain)
    write_item_content(
        item,
        [text_part("Which answer is best?")],
        [[text_part(f"Answer {k}")] for k in range(1, n + 1)],
    )
    return item


def claimed(task, order="3142", n=4, **project_kwargs):
    project = make_project(task=task, **project_kwargs)
    item = n_item(project, n)
    user = make_member(project)
    assignment = claim_next_item(project=project, annotator=user)
    assert assignment is not None
    Assignment.objects.filter(pk=assignment.pk).update(display_order=order)
    return project, item, user, assignment


def ranks_of(judgement) -> dict[int, int]:
    return dict(judgement.slots.values_list("slot", "rank"))


@pytest.mark.parametrize("task", [Task.BEST_OF_N, Task.RANKING])
def test_a_lease_orders_all_n_responses_and_keeps_its_order(task):
    project = make_project(task=task)
    n_item(project, 4)
    n_item(project, 3)
    user = make_member(project)
    first = claim_next_item(project=project, annotator=user)
    stored = Assignment.objects.get(pk=first.pk).display_order
    assert first.display_order == stored
    assert rules.is_order(stored, first.item.content_parts.values("slot").distinct().count() - 1)
    # Resumed, it keeps its order; the item kept ready gets its own N.
    assert claim_next_item(project=project, annotator=user).display_order == stored
    ahead = claim_ahead(project=project, annotator=user, holding=first.pk)
    n_ahead = ahead.item.content_parts.exclude(slot="prompt").values("slot").distinct().count()
    assert rules.is_order(Assignment.objects.get(pk=ahead.pk).display_order, n_ahead)


def test_display_orders_are_drawn_over_every_permutation():
    project = make_project(task=Task.RANKING, votes_per_item=1)
    for _ in range(60):
        n_item(project, 3)
    seen = Counter()
    for _ in range(60):
        user = make_member(project)
        seen[claim_next_item(project=project, annotator=user).display_order] += 1
    assert set(seen) == {"123", "132", "213", "231", "312", "321"}


def test_a_ranking_is_stored_in_canonical_ranks():
    _, _, user, a = claimed(Task.RANKING, order="3142")
    # Shown A=slot 3, B=slot 1, C=slot 4, D=slot 2. The annotator ranks
    # C first, A and D tied second, B fourth.
    vote = DisplayedVote(task="ranking", ranks=(2, 4, 1, 2), rationale="C is exact")
    j = submit_judgement(assignment_id=a.pk, annotator=user, vote=vote)
    j = Judgement.objects.get(pk=j.pk)
    assert (j.task, j.choice) == ("ranking", "")
    assert ranks_of(j) == {3: 2, 1: 4, 4: 1, 2: 2}
    a.item.refresh_from_db()
    assert (a.item.votes_1, a.item.votes_2, a.item.votes_tie) == (0, 0, 0)


@pytest.mark.parametrize(("pick", "stored"), [("1", "3"), ("4", "2"), ("none", "none")])
def test_a_pick_is_stored_as_the_canonical_slot(pick, stored):
    _, _, user, a = claimed(Task.BEST_OF_N, order="3142")
    j = submit_judgement(
        assignment_id=a.pk, annotator=user, vote=DisplayedVote(task="best_of_n", pick=pick)
    )
    assert Judgement.objects.get(pk=j.pk).choice == stored
    assert not j.slots.exists()


def test_refusals_name_what_the_annotator_saw():
    _, _, user, a = claimed(Task.RANKING, order="3142")
    with pytest.raises(JudgementInvalid) as refused:
        submit_judgement(
            assignment_id=a.pk,
            annotator=user,
            vote=DisplayedVote(task="ranking", ranks=(1, 1, 2, 3)),
        )
    assert set(refused.value.errors) == {"ranks"}
    with pytest.raises(JudgementInvalid) as wrong_task:
        submit_judgement(assignment_id=a.pk, annotator=user, vote=DisplayedVote(choice="left"))
    assert set(wrong_task.value.errors) == {"task"}
    assert not Judgement.objects.exists()


def test_a_correctness_domain_asks_every_response_its_label():
    project = make_project(task=Task.BEST_OF_N)
    domain = project.domains.get(slug="general_correctness")
    assert domain.is_correctness
    item = n_item(project, 3, domain=domain)
    user = make_member(project)
    a = claim_next_item(project=project, annotator=user)
    Assignment.objects.filter(pk=a.pk).update(display_order="231")
    with pytest.raises(JudgementInvalid) as refused:
        submit_judgement(
            assignment_id=a.pk,
            annotator=user,
            vote=DisplayedVote(task="best_of_n", pick="2", slot_correct=("yes", "", "no")),
        )
    assert refused.value.errors == {"slot_correct_2": "Say whether response B is correct."}
    j = submit_judgement(
        assignment_id=a.pk,
        annotator=user,
        vote=DisplayedVote(task="best_of_n", pick="2", slot_correct=("yes", "unsure", "no")),
    )
    assert j.choice == "3"
    assert dict(j.slots.values_list("slot", "correctness")) == {2: "yes", 3: "unsure", 1: "no"}
    assert item.pk == a.item_id


def test_a_ranking_is_revised_as_a_new_judgement_in_canonical_ranks():
    _, _, user, a = claimed(Task.RANKING, order="21", n=2)
    submit_judgement(
        assignment_id=a.pk, annotator=user, vote=DisplayedVote(task="ranking", ranks=(1, 2))
    )
    revised = revise_judgement(
        assignment_id=a.pk, annotator=user, vote=DisplayedVote(task="ranking", ranks=(2, 1))
    )
    assert revised.revision == 2
    # Shown A = slot 2, B = slot 1: first A best, then B best.
    assert ranks_of(revised) == {1: 1, 2: 2}
    old = Judgement.objects.get(assignment=a, revision=1)
    assert ranks_of(old) == {2: 1, 1: 2} and not old.is_current


def test_the_compare_page_posts_a_ranking_by_position(client):
    _, _, user, a = claimed(Task.RANKING, order="3142")
    client.force_login(user)
    page = client.get(reverse("work_item", args=[a.pk])).content.decode()
    assert 'id="judge-form"' in page and 'data-task="ranking"' in page
    assert re.findall(r"Answer (\d)", page) == ["3", "1", "4", "2"]
    assert len(re.findall(r'<select name="rank_\d"', page)) == 4
    # The `?` panel lists the ranking's keys, which ranking.js acts on.
    assert 'data-action-key="place"><kbd>1…4</kbd>' in page
    assert 'data-action-key="tie-next"><kbd>=</kbd>' in page
    assert 'data-action-key="take-back"><kbd>Backspace</kbd>' in page
    # Plain form post (no JavaScript): dense numbers are ranks in the same order.
    data = {"task": "ranking", "n": "4", "rank_1": "2", "rank_2": "3", "rank_3": "1"}
    refused = client.post(reverse("work_submit", args=[a.pk]), {**data, "confidence": "2"})
    assert refused.status_code == 400
    assert "Place every response: D has no place yet." in refused.content.decode()
    done = client.post(
        reverse("work_submit", args=[a.pk]), {**data, "rank_4": "2", "confidence": "2"}
    )
    assert done.status_code == 302
    j = Judgement.objects.get(assignment=a)
    # C first (slot 4); A and D tied 2nd (slots 3, 2); B 4th (slot 1).
    assert ranks_of(j) == {4: 1, 3: 2, 2: 2, 1: 4}
    # The page of the judged item shows the ranking back by position.
    again = client.get(reverse("work_item", args=[a.pk])).content.decode()
    assert re.search(r'<option value="4" selected>4</option>', again)


def test_the_compare_page_posts_a_pick_by_position(client):
    _, _, user, a = claimed(Task.BEST_OF_N, order="3142")
    client.force_login(user)
    page = client.get(reverse("work_item", args=[a.pk])).content.decode()
    assert 'id="pick-none"' in page and 'data-task="best_of_n"' in page
    refused = client.post(reverse("work_submit", args=[a.pk]), {"task": "best_of_n", "n": "4"})
    assert refused.status_code == 400
    assert "Pick one of the responses, or none of them." in refused.content.decode()
    client.post(reverse("work_submit", args=[a.pk]), {"task": "best_of_n", "n": "4", "pick": "3"})
    assert Judgement.objects.get(assignment=a).choice == "4"


def test_the_api_takes_a_ranking_and_a_pick_by_position():
    _, _, user, a = claimed(Task.RANKING, order="3142")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    url = f"/api/v1/assignments/{a.pk}/judgement/"
    bad = api.post(url, {"ranking": [1, 1, 2, 3]}, format="json")
    assert bad.status_code == 400 and "ranking" in bad.json()["error"]["fields"]
    ok = api.post(url, {"ranking": [2, 4, 1, 2]}, format="json")
    assert ok.status_code == 201, ok.json()
    assert ok.json()["ranking"] == [2, 4, 1, 2]
    assert ranks_of(Judgement.objects.get(assignment=a)) == {3: 2, 1: 4, 4: 1, 2: 2}

    _, _, picker, b = claimed(Task.BEST_OF_N, order="3142")
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=picker).key}")
    got = api.post(f"/api/v1/assignments/{b.pk}/judgement/", {"pick": "B"}, format="json")
    assert got.status_code == 201, got.json()
    assert got.json()["pick"] == "B"
    assert Judgement.objects.get(assignment=b).choice == "1"


def test_closing_an_item_keeps_the_rankings_it_has_as_its_votes():
    """A ranking moves no pair tally; a curator closing its item still
    counts it (votes_needed never drops below the votes it has)."""
    from django.db import transaction

    from annotate.loop.leases import stop_collecting_votes

    _, item, user, a = claimed(Task.RANKING, order="3142")
    submit_judgement(
        assignment_id=a.pk,
        annotator=user,
        vote=DisplayedVote(task="ranking", ranks=(1, 2, 3, 4)),
    )
    with transaction.atomic():
        stop_collecting_votes(item_id=item.pk)
    item.refresh_from_db()
    assert (item.votes_needed, item.live_assignments) == (1, 1)


@pytest.mark.parametrize("task", [Task.RANKING, Task.BEST_OF_N])
def test_undo_shows_the_vote_by_position_and_saves_a_revision(client, task):
    _, _, user, a = claimed(task, order="3142")
    client.force_login(user)
    first = (
        {"rank_1": "2", "rank_2": "4", "rank_3": "1", "rank_4": "2"}
        if task == Task.RANKING
        else {"pick": "3"}
    )
    url = reverse("work_submit", args=[a.pk])
    assert client.post(url, {"task": task, "n": "4", **first}).status_code == 302
    page = client.get(reverse("work_item", args=[a.pk]) + "?undo=1").content.decode()
    assert 'name="revise"' in page
    if task == Task.RANKING:
        assert re.search(
            r'id="rank_3"[^>]*>\s*<option value="">—</option>\s*<option value="1" selected>', page
        )
        second = {"rank_1": "1", "rank_2": "2", "rank_3": "3", "rank_4": "4"}
    else:
        assert re.search(r'id="pick-3" value="3" checked', page)
        second = {"pick": "none"}
    assert client.post(url, {"task": task, "n": "4", "revise": "1", **second}).status_code == 302
    current = Judgement.objects.get(assignment=a, is_current=True)
    assert current.revision == 2
    if task == Task.RANKING:
        assert ranks_of(current) == {3: 1, 1: 2, 4: 3, 2: 4}
    else:
        assert current.choice == "none"
