"""The compare fragment's form state: a fresh item is rendered without form
objects, so check what it pre-selects, and that a rejected submit and a
revisited judgement still show what was chosen."""

import re

import pytest
from django.urls import reverse

from annotate.loop.service import Vote, claim_next_item, submit_judgement
from annotate.models import Assignment, AssignmentStatus
from tests.factories import make_item, make_member, make_project

pytestmark = pytest.mark.django_db


def checked(html: str) -> set[tuple[str, str]]:
    """(name, value) of every checked radio button or checkbox."""
    return {
        (m["name"], m["value"])
        for m in re.finditer(
            r'<input type="\w+" name="(?P<name>\w+)"(?: id="[^"]*")? '
            r'value="(?P<value>\w+)" checked',
            html,
        )
    }


def setup(client, *, swapped=False):
    project = make_project()
    make_item(project, domain=project.domains.get(slug="vqa"))
    user = make_member(project, role="annotator")
    client.force_login(user)
    assignment = claim_next_item(project=project, annotator=user)
    Assignment.objects.filter(pk=assignment.pk).update(display_order="21" if swapped else "12")
    return user, assignment


def test_a_fresh_item_preselects_medium_confidence_only(client):
    _, assignment = setup(client)
    html = client.get(reverse("work_item", args=[assignment.pk])).content.decode()
    assert checked(html) == {("confidence", "2")}
    for value, label in (("yes", "Correct"), ("no", "Incorrect"), ("unsure", "Unsure")):
        for side in ("left", "right"):
            assert f'id="correct_{side}-{value}" value="{value}"> {label} <kbd' in html
    assert f'action="{reverse("work_submit", args=[assignment.pk])}"' in html
    assert f'hx-post="{reverse("work_skip", args=[assignment.pk])}"' in html
    assert 'class="error"' not in html and "form-errors" not in html


def test_a_rejected_submit_shows_what_was_sent_and_the_errors(client):
    _, assignment = setup(client)
    response = client.post(
        reverse("work_submit", args=[assignment.pk]),
        {
            "confidence": "3",
            "correct_left": "no",
            "rationale": "because <b>",
            "flagged_problem": "on",
        },
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 422
    html = response.content.decode()
    assert checked(html) == {("confidence", "3"), ("correct_left", "no"), ("flagged_problem", "on")}
    assert "Choose the better response." in html
    assert "because &lt;b&gt;</textarea>" in html


@pytest.mark.parametrize("swapped", [False, True])
def test_a_judged_item_shows_its_judgement_in_displayed_terms(client, swapped):
    user, assignment = setup(client, swapped=swapped)
    vote = Vote(choice="1", correct_1="yes", correct_2="unsure", confidence=1, rationale="r")
    submit_judgement(assignment_id=assignment.pk, annotator=user, vote=vote)
    assert Assignment.objects.get(pk=assignment.pk).status == AssignmentStatus.SUBMITTED

    html = client.get(reverse("work_item", args=[assignment.pk])).content.decode()

    shown_1, shown_2 = ("right", "left") if swapped else ("left", "right")
    assert checked(html) == {
        ("choice", shown_1),
        ("confidence", "1"),
        (f"correct_{shown_1}", "yes"),
        (f"correct_{shown_2}", "unsure"),
    }


def test_the_page_and_the_fragment_carry_one_csrf_token_for_both_forms(client):
    _, assignment = setup(client)
    page = client.get(reverse("work_item", args=[assignment.pk])).content.decode()
    fragment = client.get(
        reverse("work_item", args=[assignment.pk]), HTTP_HX_REQUEST="true"
    ).content.decode()
    for html in (page, fragment):
        assert html.count('<div id="work"') == 1
        work = html[html.index('<div id="work"') :]
        tokens = re.findall(r'name="csrfmiddlewaretoken" value="(\w+)"', work)
        assert len(tokens) == 2 and tokens[0] == tokens[1]  # the submit and skip forms
    # The page wraps the fragment in the site's layout; the fragment is bare,
    # and is exactly the page's #work element (one template for both).
    assert page.lstrip().startswith("<!doctype html>") and "<title>" in page
    assert fragment.startswith('<div id="work"') and "<title>" not in fragment

    def same_token(html):
        return re.sub(r'(name="csrfmiddlewaretoken" value=")\w+', r"\1T", html)

    assert same_token(fragment).strip() in same_token(page)


def test_an_error_about_the_item_shows_above_the_form_and_skip_errors_in_the_skip_form(client):
    _, assignment = setup(client)
    Assignment.objects.filter(pk=assignment.pk).update(status=AssignmentStatus.SKIPPED)
    response = client.post(
        reverse("work_submit", args=[assignment.pk]),
        {"choice": "left", "correct_left": "yes", "correct_right": "no", "confidence": "2"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 422
    html = response.content.decode()
    assert '<div class="form-errors" id="err-form">' in html
    assert 'id="error-summary" data-count="1"' in html
    assert "You skipped this item; it can no longer be judged." in html
    assert checked(html) >= {("choice", "left"), ("correct_left", "yes")}

    Assignment.objects.filter(pk=assignment.pk).update(status=AssignmentStatus.OPEN)
    response = client.post(
        reverse("work_skip", args=[assignment.pk]), {"reason": ""}, HTTP_HX_REQUEST="true"
    )
    html = response.content.decode()
    assert response.status_code == 400
    assert "<details open>" in html and "Say why you skip." in html
    assert 'id="skip-reason"' in html and 'aria-describedby="err-skip"' in html
    assert '<span class="error" id="err-skip">Say why you skip.</span>' in html


def test_each_error_is_beside_its_field_and_listed_in_page_order(client):
    """aria-invalid and aria-describedby on every control of an invalid
    field, the message under that id, and a summary linking to the first
    control of each field, in the order the page shows them."""
    _, assignment = setup(client)
    response = client.post(
        reverse("work_submit", args=[assignment.pk]),
        {"choice": "tie", "correct_right": "yes", "flagged_problem": "on"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 422
    html = response.content.decode()
    for value in ("yes", "no", "unsure"):
        assert re.search(
            rf'id="correct_left-{value}"[^>]*'
            r'aria-invalid="true" aria-describedby="err-correct_left"',
            html,
        )
        assert re.search(rf'id="correct_right-{value}" value="{value}"( checked)?>', html)
    assert 'id="rationale"' in html and 'aria-describedby="err-rationale"' in html
    assert 'aria-describedby="err-problem_reason"' in html
    assert 'id="err-correct_left">Answer “Is A correct?”</span>' in html
    targets = re.findall(r'<li><a href="#([\w-]+)">', html)
    assert targets == ["correct_left-yes", "rationale", "problem_reason"]
    assert 'data-errors="3"' in html
    assert "3 things to fix before submitting" in html


def test_safety_items_ask_whether_each_response_is_safe(client):
    project = make_project()
    make_item(project, domain=project.domains.get(slug="safety"))
    user = make_member(project, role="annotator")
    client.force_login(user)
    assignment = claim_next_item(project=project, annotator=user)
    html = client.get(reverse("work_item", args=[assignment.pk])).content.decode()
    assert "<legend>Is A safe?</legend>" in html and "<legend>Is B safe?</legend>" in html
    assert 'value="yes"> Safe <kbd' in html and 'value="no"> Unsafe <kbd' in html
    assert "correct?" not in html and "Correct <kbd" not in html
    rejected = client.post(
        reverse("work_submit", args=[assignment.pk]), {"choice": "left"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert '<a href="#correct_left-yes">Answer “Is A safe?”</a>' in rejected
    assert '<a href="#correct_right-yes">Answer “Is B safe?”</a>' in rejected
    # The wording is the domain's own: an admin can change it per domain.
    other_project = make_project()
    domain = other_project.domains.get(slug="vqa")
    domain.correctness_question = "Does {response} answer the question?"
    domain.yes_label, domain.no_label = "Answers", "Misses"
    domain.save()
    make_item(other_project, domain=domain)
    make_member(other_project, user=user, role="annotator")
    a2 = claim_next_item(project=other_project, annotator=user)
    html = client.get(reverse("work_item", args=[a2.pk])).content.decode()
    assert "<legend>Does A answer the question?</legend>" in html
    assert 'value="yes"> Answers <kbd' in html
