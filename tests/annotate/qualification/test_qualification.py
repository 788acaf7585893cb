"""Qualification and training (issue 36 item 1): attempts, answers, the
pass mark, the retry wait, the gate on benchmark items, the pages."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotate.loop.rules import DisplayedVote
from annotate.loop.service import Vote, claim_next_item, submit_judgement
from annotate.models import (
    Assignment,
    Judgement,
    Membership,
    QualificationAnswer,
    QualificationAttempt,
    SetupEvent,
)
from annotate.qualification.service import (
    QualificationError,
    QualificationRequired,
    admit_member,
    answer_item,
    display_order,
    is_admitted,
    qualification_status,
    start_attempt,
)
from tests.factories import make_assignment, make_item, make_member, make_project, make_user

pytestmark = pytest.mark.django_db


def qualifying_project(n=3, **kwargs):
    project = make_project(qualification_required=True, **kwargs)
    domain = project.domains.get(slug="general_preference")
    golds = [
        make_item(
            project,
            domain=domain,
            purpose="qualification",
            gold_choice="1",
            explanation=f"**Response 1** is right ({i}).",
            votes_needed=0,
            response_1=f"GOOD {i}",
            response_2=f"BAD {i}",
        )
        for i in range(n)
    ]
    bench = make_item(project, domain=domain, response_1="BENCH ONE", response_2="BENCH TWO")
    return project, golds, bench


def shown(attempt, item, right=True) -> DisplayedVote:
    """The displayed choice that picks response 1 (right) or 2."""
    left_is_1 = display_order(attempt.pk, item.pk) == "12"
    side = "left" if left_is_1 == right else "right"
    return DisplayedVote(choice=side)


def answer_all(project, user, rights):
    attempt = start_attempt(project=project, annotator=user)
    items = {i.pk: i for i in project.items.filter(purpose="qualification")}
    for pk, right in zip(attempt.item_ids, rights, strict=True):
        answer_item(
            attempt_id=attempt.pk,
            annotator=user,
            item_id=pk,
            vote=shown(attempt, items[pk], right),
        )
    attempt.refresh_from_db()
    return attempt


def test_newcomer_must_qualify_and_cannot_claim_benchmark_items():
    project, _, _ = qualifying_project()
    user = make_member(project)
    assert not is_admitted(project=project, user=user)
    with pytest.raises(QualificationRequired):
        claim_next_item(project=project, annotator=user)


def test_curators_and_projects_without_qualification_are_never_asked():
    project, _, _ = qualifying_project()
    curator = make_member(project, role="curator")
    assert is_admitted(project=project, user=curator)
    open_project = make_project()
    make_item(open_project)
    annotator = make_member(open_project)
    assert is_admitted(project=open_project, user=annotator)
    assert claim_next_item(project=open_project, annotator=annotator) is not None


def test_passing_admits_and_answers_are_not_judgements():
    project, golds, bench = qualifying_project(n=5)
    user = make_member(project)
    attempt = answer_all(project, user, [True, True, True, True, False])
    assert (attempt.right, attempt.total, attempt.passed) == (4, 5, True)
    assert attempt.finished_at is not None
    assert Membership.objects.get(project=project, user=user).admitted_at is not None
    assert QualificationAnswer.objects.filter(attempt=attempt).count() == 5
    assert not Judgement.objects.exists() and not Assignment.objects.exists()
    for item in golds:
        item.refresh_from_db()
        assert item.n_votes == 0 and item.live_assignments == 0
    assignment = claim_next_item(project=project, annotator=user)
    assert assignment.item_id == bench.pk


def test_failing_waits_for_the_retry_and_the_server_enforces_it():
    project, _, _ = qualifying_project(n=3, qualification_retry_hours=24)
    user = make_member(project)
    attempt = answer_all(project, user, [True, False, False])
    assert (attempt.right, attempt.passed) == (1, False)
    status = qualification_status(project=project, user=user)
    assert status.retry_at is not None and not status.can_start
    with pytest.raises(QualificationError, match="retry"):
        start_attempt(project=project, annotator=user)
    later = timezone.now() + timedelta(hours=24, minutes=1)
    second = start_attempt(project=project, annotator=user, now=later)
    assert second.pk != attempt.pk


def test_pass_mark_is_inclusive_and_the_project_sets_it():
    project, _, _ = qualifying_project(n=4, qualification_pass_mark=0.5)
    user = make_member(project)
    assert answer_all(project, user, [True, True, False, False]).passed


def test_one_open_attempt_and_a_repeated_answer_is_the_first():
    project, golds, _ = qualifying_project(n=2)
    user = make_member(project)
    first = start_attempt(project=project, annotator=user)
    assert start_attempt(project=project, annotator=user).pk == first.pk
    item = golds[0]
    one = answer_item(
        attempt_id=first.pk, annotator=user, item_id=item.pk, vote=shown(first, item, True)
    )
    again = answer_item(
        attempt_id=first.pk, annotator=user, item_id=item.pk, vote=shown(first, item, False)
    )
    assert one.pk == again.pk and again.correct


def test_someone_elses_attempt_is_refused():
    project, golds, _ = qualifying_project(n=1)
    user, other = make_member(project), make_member(project)
    attempt = start_attempt(project=project, annotator=user)
    with pytest.raises(QualificationError):
        answer_item(
            attempt_id=attempt.pk,
            annotator=other,
            item_id=golds[0].pk,
            vote=shown(attempt, golds[0]),
        )


def test_a_vote_on_an_old_benchmark_lease_is_refused_until_admitted():
    project, _, bench = qualifying_project()
    user = make_member(project)
    assignment = make_assignment(bench, user)
    with pytest.raises(QualificationRequired):
        submit_judgement(assignment_id=assignment.pk, annotator=user, vote=Vote(choice="1"))


def test_curator_admits_by_hand_audited():
    project, _, bench = qualifying_project()
    user = make_member(project)
    curator = make_member(project, role="curator")
    admit_member(project=project, user_id=user.pk, actor=curator, reason="Known expert")
    assert is_admitted(project=project, user=user)
    event = SetupEvent.objects.get(action="qualification_admit")
    assert event.actor == curator and event.subject == user
    assert event.after["reason"] == "Known expert"
    assert claim_next_item(project=project, annotator=user).item_id == bench.pk


def test_switching_qualification_on_admits_who_already_judged():
    from annotate.setup.service import update_project

    project = make_project()
    item = make_item(project, domain=project.domains.get(slug="general_preference"))
    veteran, newcomer = make_member(project), make_member(project)
    admin = make_member(project, role="admin")
    submit_judgement(
        assignment_id=make_assignment(item, veteran).pk, annotator=veteran, vote=Vote(choice="1")
    )
    update_project(actor=admin, project=project, qualification_required=True)
    project.refresh_from_db()
    assert is_admitted(project=project, user=veteran)
    assert not is_admitted(project=project, user=newcomer)


# --- Pages -------------------------------------------------------------------------------


def test_queue_sends_a_newcomer_to_the_qualification_page(client):
    project, _, _ = qualifying_project()
    client.force_login(make_member(project))
    response = client.post(reverse("work_start", args=[project.slug]))
    assert response.status_code == 302
    assert response["Location"] == reverse("qualify", args=[project.slug])


def test_qualification_pages_serve_items_then_the_explanation(client):
    project, golds, _ = qualifying_project(n=2)
    user = make_member(project)
    client.force_login(user)
    page = client.get(reverse("qualify", args=[project.slug]))
    assert b"Start the qualification" in page.content
    client.post(reverse("qualify_start", args=[project.slug]))
    page = client.get(reverse("qualify", args=[project.slug]))
    body = page.content.decode()
    assert "Qualification: item" in body and "GOOD" in body
    assert "is right" not in body  # the explanation only after the answer
    assert 'name="reason"' not in body  # no skip
    attempt = QualificationAttempt.objects.get()
    item = next(i for i in golds if i.pk == attempt.item_ids[0])
    choice = shown(attempt, item, right=False).choice
    url = reverse("qualify_answer", args=[project.slug, attempt.pk, item.pk])
    response = client.post(url, {"choice": choice, "confidence": "3"})
    assert response.status_code == 302
    feedback = client.get(response["Location"]).content.decode()
    assert "Not right" in feedback
    assert "<strong>Response 1</strong> is right" in feedback  # sanitised Markdown


def test_an_invalid_answer_shows_the_compare_page_errors(client):
    project, golds, _ = qualifying_project(n=1)
    user = make_member(project)
    client.force_login(user)
    attempt = start_attempt(project=project, annotator=user)
    url = reverse("qualify_answer", args=[project.slug, attempt.pk, golds[0].pk])
    response = client.post(url, {"confidence": "3"})
    assert response.status_code == 400
    assert not QualificationAnswer.objects.exists()


def test_someone_elses_attempt_page_is_404(client):
    project, golds, _ = qualifying_project(n=1)
    owner = make_member(project)
    attempt = start_attempt(project=project, annotator=owner)
    client.force_login(make_member(project))
    url = reverse("qualify_answer", args=[project.slug, attempt.pk, golds[0].pk])
    assert client.post(url, {"choice": "left", "confidence": "3"}).status_code == 404
    client.force_login(make_user())  # a stranger
    assert client.get(reverse("qualify", args=[project.slug])).status_code == 404


# --- Import ------------------------------------------------------------------------------


def test_pairs_import_reads_purpose_and_explanation(tmp_path):
    import json

    from annotate.importing.service import import_items_from_paths
    from tests.factories import png_bytes

    (tmp_path / "img.png").write_bytes(png_bytes())
    base = {"prompt": "Which?", "image": "img.png", "category": "vqa"}
    records = [
        {**base, "id": "q1", "chosen": "Right", "rejected": "Wrong",
         "purpose": "qualification", "explanation": "Because *so*."},
        {**base, "id": "b1", "chosen": "One", "rejected": "Two"},
    ]  # fmt: skip
    data = tmp_path / "pairs.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in records))
    project = make_project()
    import_items_from_paths(project=project, dataset=data, images=tmp_path)
    q = project.items.get(external_id="q1")
    assert (q.purpose, q.explanation, q.votes_needed) == ("qualification", "Because *so*.", 0)
    assert q.gold_choice in ("1", "2")  # the chosen response, whatever the gold option
    assert (q.response_1 if q.gold_choice == "1" else q.response_2) == "Right"
    b = project.items.get(external_id="b1")
    assert (b.purpose, b.gold_choice, b.votes_needed) == ("benchmark", "", project.votes_per_item)


def test_import_refuses_an_unknown_purpose(tmp_path):
    import json

    from annotate.importing.records import ImportFailed
    from annotate.importing.service import import_items_from_paths
    from tests.factories import png_bytes

    (tmp_path / "img.png").write_bytes(png_bytes())
    record = {"id": "x", "prompt": "p", "image": "img.png", "category": "vqa",
              "chosen": "a", "rejected": "b", "purpose": "training"}  # fmt: skip
    data = tmp_path / "pairs.jsonl"
    data.write_text(json.dumps(record))
    with pytest.raises(ImportFailed, match="purpose"):
        import_items_from_paths(project=make_project(), dataset=data, images=tmp_path)


# --- API ---------------------------------------------------------------------------------


def api_client(user):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(user)
    return client


def test_api_status_and_a_refused_claim_for_a_newcomer():
    project, _, _ = qualifying_project(n=2)
    user = make_member(project)
    client = api_client(user)
    status = client.get(f"/api/v1/projects/{project.slug}/qualification/").json()
    assert status["required"] and not status["admitted"] and status["can_start"]
    assert (status["items"], status["pass_mark"], status["retry_hours"]) == (2, 0.8, 24)
    claim = client.post(f"/api/v1/projects/{project.slug}/assignments/next/")
    assert claim.status_code == 403
    assert claim.json()["error"]["code"] == "qualification_required"
    assert not Assignment.objects.exists()


def test_api_vote_on_a_benchmark_assignment_is_refused_until_admitted():
    project, _, bench = qualifying_project()
    user = make_member(project)
    assignment = make_assignment(bench, user)
    response = api_client(user).post(
        f"/api/v1/assignments/{assignment.pk}/judgement/", {"choice": "left"}, format="json"
    )
    assert response.status_code == 403, response.content
    assert not Judgement.objects.exists()


def test_api_curators_list_attempts_and_admit():
    project, _, _ = qualifying_project(n=3)
    user = make_member(project)
    answer_all(project, user, [False, False, True])
    curator = make_member(project, role="curator")
    client = api_client(curator)
    listing = client.get(f"/api/v1/projects/{project.slug}/qualification/annotators/").json()
    (row,) = listing["annotators"]
    assert row["user_id"] == user.pk and row["admitted_at"] is None
    assert [(a["right"], a["total"], a["passed"]) for a in row["attempts"]] == [(1, 3, False)]
    admitted = client.post(
        f"/api/v1/projects/{project.slug}/qualification/admit/",
        {"user_id": user.pk, "reason": "Senior radiologist"},
        format="json",
    )
    assert admitted.status_code == 200 and admitted.json()["admitted_by"] == curator.username
    assert is_admitted(project=project, user=user)
    annotator = api_client(user)
    assert (
        annotator.get(f"/api/v1/projects/{project.slug}/qualification/annotators/").status_code
        == 403
    )


def test_annotators_never_see_gold_or_explanations_of_benchmark_items_in_the_api():
    project, _, bench = qualifying_project(n=1)
    user = make_member(project)
    admit_member(project=project, user_id=user.pk, actor=make_member(project, role="curator"))
    bench.explanation = "BENCH-EXPLANATION-SECRET"
    bench.gold_choice = "2"
    bench.save()
    response = api_client(user).post(f"/api/v1/projects/{project.slug}/assignments/next/")
    body = response.content.decode()
    assert response.status_code == 200
    assert "BENCH-EXPLANATION-SECRET" not in body and "gold" not in body
    status = api_client(user).get(f"/api/v1/projects/{project.slug}/qualification/").content
    assert b"gold" not in status


def test_qualification_is_refused_for_a_project_that_is_not_pairwise():
    from annotate.setup.service import SetupError, update_project

    project = make_project(task="best_of_n")
    admin = make_member(project, role="admin")
    with pytest.raises(SetupError, match="pairwise"):
        update_project(actor=admin, project=project, qualification_required=True)


def test_the_project_page_tells_a_newcomer_about_the_qualification(client):
    project, _, _ = qualifying_project(n=1)
    newcomer = make_member(project)
    client.force_login(newcomer)
    assert b"qualification-note" in client.get(reverse("project", args=[project.slug])).content
    client.force_login(make_member(project, role="curator"))
    page = client.get(reverse("project", args=[project.slug])).content
    assert b"qualification-note" not in page
    assert reverse("qualification_people", args=[project.slug]).encode() in page


def test_curators_page_lists_attempts_and_admits(client):
    project, _, _ = qualifying_project(n=2)
    newcomer = make_member(project, pseudonym="ann-7")
    answer_all(project, newcomer, [True, False])
    curator = make_member(project, role="curator")
    client.force_login(curator)
    page = client.get(reverse("qualification_people", args=[project.slug])).content.decode()
    assert "1/2 failed" in page and "not yet" in page
    url = reverse("qualification_admit", args=[project.slug, newcomer.pk])
    assert client.post(url, {"reason": "Known expert"}).status_code == 302
    assert is_admitted(project=project, user=newcomer)
    client.force_login(newcomer)  # an annotator gets neither page nor action
    assert client.get(reverse("qualification_people", args=[project.slug])).status_code == 403
    assert client.post(url).status_code == 403


def test_qualification_items_and_answers_leave_the_progress_line_unchanged():
    from annotate.loop.page import progress, reference_progress

    project, _, _ = qualifying_project(n=3)
    user = make_member(project)
    curator = make_member(project, role="curator")
    before = (progress(project, curator), reference_progress(project, curator))
    answer_all(project, user, [True, True, True])
    after = (progress(project, curator), reference_progress(project, curator))
    assert before == after
    assert after[0]["needed"] == project.votes_per_item  # the one benchmark item's votes
    assert after[0]["collected"] == 0
