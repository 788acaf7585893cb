import pytest
from django.urls import reverse

from annotate.loop.service import Vote, claim_next_item, submit_judgement
from annotate.models import Assignment, AssignmentStatus, Judgement
from tests.conftest import on_postgres
from tests.factories import make_item, make_member, make_project, make_user

pytestmark = pytest.mark.django_db

SECRET_MODELS = ("secret-model-alpha", "secret-model-beta")


def setup_project(n_items=3, domain="general_preference", **kwargs):
    project = make_project(**kwargs)
    d = project.domains.get(slug=domain)
    items = [
        make_item(
            project,
            domain=d,
            model_1=SECRET_MODELS[0],
            model_2=SECRET_MODELS[1],
            gold_choice="2",
            reference_answer="GOLD-REFERENCE-ANSWER",
            response_1=f"FIRST RESPONSE {i}",
            response_2=f"SECOND RESPONSE {i}",
            meta={"prior_better": "Output2"},
        )
        for i in range(n_items)
    ]
    return project, items


def login(client, project, role="annotator"):
    user = make_member(project, role=role)
    client.force_login(user)
    return user


def start(client, project):
    response = client.post(reverse("work_start", args=[project.slug]))
    assert response.status_code == 302
    return response


def test_start_claims_and_redirects_to_the_compare_page(client):
    project, _ = setup_project()
    user = login(client, project)
    response = start(client, project)
    a = Assignment.objects.get(annotator=user)
    assert response["Location"] == reverse("work_item", args=[a.pk])
    page = client.get(response["Location"])
    assert page.status_code == 200
    assert b"Response A" in page.content and b"Response B" in page.content


def test_compare_page_shows_responses_in_the_stored_display_order(client):
    project, _ = setup_project(n_items=1)
    user = login(client, project)
    start(client, project)
    a = Assignment.objects.get(annotator=user)
    html = client.get(reverse("work_item", args=[a.pk])).content.decode()
    first, second = html.index("FIRST RESPONSE"), html.index("SECOND RESPONSE")
    assert (first > second) == a.shown_swapped


@pytest.mark.parametrize("swapped", [False, True])
def test_submitted_choice_is_stored_in_canonical_terms(client, swapped):
    project, _ = setup_project(n_items=2)
    user = login(client, project)
    start(client, project)
    a = Assignment.objects.get(annotator=user)
    Assignment.objects.filter(pk=a.pk).update(display_order="21" if swapped else "12")
    response = client.post(
        reverse("work_submit", args=[a.pk]), {"choice": "left", "confidence": "3"}
    )
    assert response.status_code == 302
    j = Judgement.objects.get(assignment=a)
    assert j.choice == ("2" if swapped else "1")
    assert j.confidence == 3


def test_correctness_labels_are_mapped_to_canonical_responses(client):
    project, _ = setup_project(n_items=1, domain="vqa")
    user = login(client, project)
    start(client, project)
    a = Assignment.objects.get(annotator=user)
    Assignment.objects.filter(pk=a.pk).update(display_order="21")
    client.post(
        reverse("work_submit", args=[a.pk]),
        {"choice": "right", "correct_left": "no", "correct_right": "yes"},
    )
    j = Judgement.objects.with_pair_answers().get(assignment=a)
    # right was response 1 on a swapped display
    assert (j.choice, j.correct_1, j.correct_2) == ("1", "yes", "no")


def test_invalid_submit_shows_errors_and_stores_nothing(client):
    project, _ = setup_project(n_items=1, domain="vqa")
    user = login(client, project)
    start(client, project)
    a = Assignment.objects.get(annotator=user)
    response = client.post(reverse("work_submit", args=[a.pk]), {"choice": "left"})
    assert response.status_code == 400
    assert "Answer “Is A correct?”".encode() in response.content
    assert Judgement.objects.count() == 0


def test_htmx_submit_returns_the_next_item_and_pushes_its_url(client):
    project, _ = setup_project(n_items=2)
    user = login(client, project)
    start(client, project)
    a = Assignment.objects.get(annotator=user)
    response = client.post(
        reverse("work_submit", args=[a.pk]), {"choice": "right"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    nxt = Assignment.objects.get(annotator=user, status=AssignmentStatus.OPEN)
    assert response["HX-Push-Url"] == reverse("work_item", args=[nxt.pk])
    assert b'id="work"' in response.content
    assert b"<html" not in response.content  # a fragment, not a page


def test_htmx_submit_of_the_last_item_redirects_to_done(client):
    project, _ = setup_project(n_items=1)
    user = login(client, project)
    start(client, project)
    a = Assignment.objects.get(annotator=user)
    response = client.post(
        reverse("work_submit", args=[a.pk]), {"choice": "right"}, HTTP_HX_REQUEST="true"
    )
    assert response["HX-Redirect"] == reverse("work_done", args=[project.slug])
    done = client.get(response["HX-Redirect"])
    assert b"You are done with" in done.content


def test_double_post_stores_one_judgement(client):
    project, _ = setup_project(n_items=2)
    user = login(client, project)
    start(client, project)
    a = Assignment.objects.get(annotator=user)
    url = reverse("work_submit", args=[a.pk])
    client.post(url, {"choice": "left"})
    client.post(url, {"choice": "left"})
    assert Judgement.objects.filter(assignment__annotator=user).count() == 1


def test_skip_needs_a_reason_then_moves_on(client):
    project, _ = setup_project(n_items=2)
    user = login(client, project)
    start(client, project)
    a = Assignment.objects.get(annotator=user)
    bad = client.post(reverse("work_skip", args=[a.pk]), {"reason": ""})
    assert bad.status_code == 400
    ok = client.post(reverse("work_skip", args=[a.pk]), {"reason": "not my field"})
    assert ok.status_code == 302
    a.refresh_from_db()
    assert a.status == AssignmentStatus.SKIPPED and a.skip_reason == "not my field"


def test_another_annotators_assignment_is_a_404(client):
    project, _ = setup_project()
    owner = make_member(project)
    a = claim_next_item(project=project, annotator=owner)
    login(client, project)
    assert client.get(reverse("work_item", args=[a.pk])).status_code == 404
    assert client.post(reverse("work_submit", args=[a.pk]), {"choice": "left"}).status_code == 404
    assert client.post(reverse("work_skip", args=[a.pk]), {"reason": "x"}).status_code == 404


def test_non_member_gets_404_for_project_pages(client):
    project, _ = setup_project()
    client.force_login(make_user())
    for name in ("project", "work_done", "history"):
        assert client.get(reverse(name, args=[project.slug])).status_code == 404
    assert client.post(reverse("work_start", args=[project.slug])).status_code == 404


def test_anonymous_is_sent_to_login(client):
    project, _ = setup_project()
    response = client.get(reverse("project", args=[project.slug]))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_annotator_cannot_open_admin_or_import(client):
    project, _ = setup_project()
    login(client, project)
    assert client.get(reverse("import", args=[project.slug])).status_code == 403
    response = client.get("/admin/")
    assert response.status_code == 302 and "login" in response["Location"]


def test_annotator_html_never_shows_model_names_gold_or_other_votes(client):
    project, items = setup_project(n_items=2)
    other = make_member(project)
    for item in items:
        a = Assignment.objects.create(
            item=item,
            annotator=other,
            display_order="12",
            claimed_at=item.created_at,
            lease_expires_at=item.created_at.replace(year=2100),
        )
        submit_judgement(
            assignment_id=a.pk,
            annotator=other,
            vote=Vote(choice="1", rationale="OTHER-ANNOTATOR-RATIONALE"),
        )
    user = login(client, project)
    start(client, project)
    a = Assignment.objects.get(annotator=user)
    pages = [
        client.get(reverse("work_item", args=[a.pk])),
        client.get(reverse("home")),
        client.get(reverse("project", args=[project.slug])),
    ]
    # The next item's fragment, as htmx fetches it (no item is left, so
    # another one first).
    make_item(project, model_1=SECRET_MODELS[0], model_2=SECRET_MODELS[1], gold_choice="2")
    pages.append(
        client.post(
            reverse("work_submit", args=[a.pk]),
            {"choice": "left", "rationale": "mine"},
            HTTP_HX_REQUEST="true",
        )
    )
    assert pages[-1].status_code == 200 and "HX-Push-Url" in pages[-1]
    pages.append(client.get(reverse("history", args=[project.slug])))
    pages.append(client.get(reverse("work_item", args=[a.pk])))
    for page in pages:
        html = page.content.decode()
        for secret in (
            *SECRET_MODELS,
            "GOLD-REFERENCE-ANSWER",
            "OTHER-ANNOTATOR-RATIONALE",
            "prior_better",
            "Output2",
        ):
            assert secret not in html, (secret, page.request["PATH_INFO"])


def test_history_lists_own_judgements_and_allows_revision(client):
    project, _ = setup_project(n_items=2, votes_per_item=3)
    user = login(client, project)
    start(client, project)
    a = Assignment.objects.get(annotator=user)
    client.post(reverse("work_submit", args=[a.pk]), {"choice": "left"})
    page = client.get(reverse("history", args=[project.slug]))
    assert page.status_code == 200 and b"A (left)" in page.content
    revised = client.post(reverse("work_submit", args=[a.pk]), {"choice": "right", "revise": "1"})
    assert revised.status_code == 302
    assert Judgement.objects.filter(assignment=a).count() == 2
    assert Judgement.objects.get(assignment=a, is_current=True).revision == 2


def test_history_is_paginated_with_constant_queries(client, django_assert_max_num_queries):
    project, items = setup_project(n_items=30, votes_per_item=1)
    user = login(client, project)
    for _ in items:
        a = claim_next_item(project=project, annotator=user)
        submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice="1"))
    with django_assert_max_num_queries(8):
        page = client.get(reverse("history", args=[project.slug]))
    assert page.context["page"].paginator.count == 30
    assert len(page.context["rows"]) == 25


def test_compare_page_runs_a_constant_number_of_queries(client, django_assert_max_num_queries):
    project, _ = setup_project(n_items=20)
    user = login(client, project)
    start(client, project)
    a = Assignment.objects.get(annotator=user)
    # the session, its user, the assignment with what the page shows, the
    # item's parts (its content, issue 32), the progress line read afresh
    # (the project's votes, what is left for the annotator and their own
    # count, in one statement)
    for _ in range(2):
        with django_assert_max_num_queries(5):
            client.get(reverse("work_item", args=[a.pk]))


def test_htmx_submit_and_next_item_run_a_constant_number_of_queries(
    client, django_assert_max_num_queries
):
    from curation.models import Verdict

    project, items = setup_project(n_items=20)
    for item in items:
        Verdict.objects.create(item=item, project=project)
    user = login(client, project)
    start(client, project)
    a = Assignment.objects.get(annotator=user)
    # the session, its user (a small form needs no body check first:
    # config.request_limits); the submit, which reads the assignment itself
    # (see test_submit: 3 on PostgreSQL, 6 on SQLite, and its SAVEPOINT pair);
    # the claim (see test_claim: 1, no savepoint on PostgreSQL; or 3 and a
    # SAVEPOINT pair on SQLite), the progress line with the
    # annotator's own count; the next item's parts (issue 32). The fresh
    # claim brings the next item along.
    with django_assert_max_num_queries(13 if on_postgres() else 18):
        response = client.post(
            reverse("work_submit", args=[a.pk]), {"choice": "left"}, HTTP_HX_REQUEST="true"
        )
    assert response.status_code == 200 and "HX-Push-Url" in response


def test_media_requires_login_and_serves_images_only(client, settings):
    project, items = setup_project(n_items=1)
    path = items[0].image.file
    (settings.MEDIA_ROOT / path).parent.mkdir(parents=True, exist_ok=True)
    from tests.factories import png_bytes

    (settings.MEDIA_ROOT / path).write_bytes(png_bytes())
    url = "/media/" + path
    assert client.get(url).status_code == 302
    login(client, project)
    response = client.get(url)
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    assert client.get("/media/../config/settings.py").status_code == 404
    assert client.get("/media/images/x.html").status_code == 404


def test_media_serves_a_part_only_image_to_members_only(client, settings):
    """A response's picture (an ItemPart image, not the item's own image:
    issue 24's image responses) is served to members of a project that uses
    it, and to nobody else."""
    from annotate.models import ItemPart, PartKind, Slot
    from tests.factories import make_image, make_user, png_bytes

    project, items = setup_project(n_items=1)
    picture = make_image()
    ItemPart.objects.create(
        item=items[0], slot=Slot.RESPONSE_1, position=1, kind=PartKind.IMAGE, image=picture
    )
    stored = settings.MEDIA_ROOT / picture.file
    stored.parent.mkdir(parents=True, exist_ok=True)
    stored.write_bytes(png_bytes())
    url = "/media/" + picture.file
    client.force_login(make_user())  # signed in, no project of theirs uses it
    assert client.get(url).status_code == 404
    login(client, project)
    response = client.get(url)
    assert response.status_code == 200 and response["Content-Type"] == "image/png"


@pytest.mark.parametrize("path", ["orm", "raw"])
def test_the_reads_of_ones_own_assignment_load_what_the_orm_loads(path):
    """The compare page's read and the submit's locked read, on either
    statement path (raw: PostgreSQL's or SQLite's, by the database), load
    what the ORM's select_related() loads, values converted as the ORM
    converts them; another annotator's assignment, or a removed member's,
    is None."""
    from django.db import transaction

    from annotate.loop import orm, postgres, sqlite
    from annotate.models import Membership

    statements = orm if path == "orm" else postgres if on_postgres() else sqlite
    project, _ = setup_project(n_items=3)
    ann, bob = make_member(project), make_member(project)
    a = claim_next_item(project=project, annotator=ann)
    submit_judgement(assignment_id=a.pk, annotator=ann, vote=Vote(choice="1"))
    expected = (
        Assignment.objects.own(ann).select_related("item__project", "item__domain").get(pk=a.pk)
    )

    def values(obj, skip=()):
        # With each value's type: True equals 1, an aware datetime no naive one.
        return {
            f.attname: (type(getattr(obj, f.attname)), getattr(obj, f.attname))
            for f in obj._meta.concrete_fields
            if f.attname not in skip and f.attname not in obj.get_deferred_fields()
        }

    with transaction.atomic():
        locked = statements.locked_assignment(assignment_id=a.pk, annotator=ann)
    page = statements.assignment_for_page(assignment_id=a.pk, annotator=ann)
    for read in (page, locked):
        related = ("project", "domain")
        assert values(read) == values(expected)
        assert values(read.item) == values(expected.item, skip=read.item.get_deferred_fields())
        for name in related:
            # JSON columns (Project.import_roots) are left deferred by the raw
            # read, as the item's are, and load on access.
            got = getattr(read.item, name)
            skip = got.get_deferred_fields()
            assert values(got) == values(getattr(expected.item, name), skip=skip)
            assert all(getattr(got, f) == getattr(getattr(expected.item, name), f) for f in skip)
        assert read.item.prompt == expected.item.prompt  # deferred ones load on access
    with transaction.atomic():
        assert statements.locked_assignment(assignment_id=a.pk, annotator=bob) is None
    assert statements.assignment_for_page(assignment_id=a.pk, annotator=bob) is None
    Membership.objects.filter(project=project, user=ann).delete()
    assert statements.assignment_for_page(assignment_id=a.pk, annotator=ann) is None
    with transaction.atomic():
        assert statements.locked_assignment(assignment_id=a.pk, annotator=ann) is None


def test_a_superuser_outside_the_project_sees_their_own_count(client):
    project, _ = setup_project(n_items=3)
    admin = make_user(is_superuser=True, is_staff=True)
    a = claim_next_item(project=project, annotator=admin)
    submit_judgement(assignment_id=a.pk, annotator=admin, vote=Vote(choice="1"))
    following = claim_next_item(project=project, annotator=admin)
    client.force_login(admin)
    page = client.get(reverse("work_item", args=[following.pk]))
    assert page.status_code == 200
    assert "You: <strong>1</strong> judged" in page.content.decode()


def test_history_shows_every_status_filters_and_keeps_its_query_count(
    client, django_assert_max_num_queries
):
    from annotate.loop.service import revise_judgement, skip_item

    project, items = setup_project(n_items=40, votes_per_item=3)
    user = login(client, project)
    done = {"submitted": 0, "revised": 0, "flagged": 0, "skipped": 0}
    for n in range(len(items)):
        a = claim_next_item(project=project, annotator=user)
        if n % 4 == 3:
            skip_item(assignment_id=a.pk, annotator=user, reason=f"reason {n}")
            done["skipped"] += 1
            continue
        flagged = n % 4 == 1
        submit_judgement(
            assignment_id=a.pk,
            annotator=user,
            vote=Vote(choice="1", flagged_problem=flagged, problem_reason="x" if flagged else ""),
        )
        done["submitted"] += 1
        done["flagged"] += flagged
        if n % 4 == 2:
            revise_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice="2"))
            done["revised"] += 1
    # Someone else's work never shows.
    other = make_member(project, role="annotator")
    a = claim_next_item(project=project, annotator=other)
    submit_judgement(assignment_id=a.pk, annotator=other, vote=Vote(choice="1"))

    url = reverse("history", args=[project.slug])
    # The session, its user, the membership, the count, the page, its
    # judgements, its thumbnails (each item's first picture, in one query).
    with django_assert_max_num_queries(7):
        page = client.get(url)
    assert page.context["page"].paginator.count == 40
    for status, n in done.items():
        with django_assert_max_num_queries(7):
            page = client.get(url, {"status": status})
        assert page.context["page"].paginator.count == n, status
        badges = [r["badges"] for r in page.context["rows"]]
        assert all(status in b for b in badges), status
    html = client.get(url, {"status": "revised"}).content.decode()
    assert "Revised (revision 2)" in html and "(superseded)" in html
    row = client.get(url, {"status": "skipped"}).context["rows"][0]
    assert row["current"] is None and row["assignment"].skip_reason.startswith("reason")
    assert f"Item {row['item'].pk}" in client.get(url, {"status": "skipped"}).content.decode()
    # An unknown filter shows everything.
    assert client.get(url, {"status": "nope"}).context["status"] == ""


def test_the_progress_line_is_right_after_every_vote(client):
    project, items = setup_project(n_items=4, votes_per_item=2)
    user = login(client, project)
    other = make_member(project, role="annotator")
    # Someone else holds one item and judged another.
    held = claim_next_item(project=project, annotator=other)
    done = claim_next_item(project=project, annotator=other)
    submit_judgement(assignment_id=done.pk, annotator=other, vote=Vote(choice="1"))
    start(client, project)
    for n in range(4):
        a = Assignment.objects.get(annotator=user, status=AssignmentStatus.OPEN)
        html = client.get(reverse("work_item", args=[a.pk])).content.decode()
        assert f"You: <strong>{n}</strong> judged" in html
        # this one and the rest: each has room for another vote
        assert f"<strong>{4 - n}</strong> left for you" in html
        assert f"Project: <strong>{1 + n}</strong>/8 votes" in html
        response = client.post(
            reverse("work_submit", args=[a.pk]), {"choice": "left"}, HTTP_HX_REQUEST="true"
        )
        if n < 3:
            assert response.status_code == 200
            html = response.content.decode()
            assert f"You: <strong>{n + 1}</strong> judged" in html
            assert f"<strong>{3 - n}</strong> left for you" in html
            assert f"Project: <strong>{2 + n}</strong>/8 votes" in html
    assert held.item_id in [i.pk for i in items]


def test_history_shows_each_items_first_picture_wherever_it_is(client):
    # An MRB item's picture is its prompt's; a text-to-image item's are its
    # answers' (nothing in the Item's image column): both get a thumbnail.
    from annotate.models.parts import image_part, text_part, write_item_content
    from tests.factories import make_image

    project, (mrb_item, answers_item, text_item) = setup_project(n_items=3, votes_per_item=1)
    first, second = make_image(), make_image()
    write_item_content(
        answers_item,
        [text_part("Draw two red squares.")],
        [[image_part(first.pk)], [image_part(second.pk)]],
    )
    write_item_content(text_item, [text_part("Say hello.")], [[text_part("Hi")], [text_part("Yo")]])
    user = login(client, project)
    for _ in range(3):
        a = claim_next_item(project=project, annotator=user)
        submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice="1"))
    rows = {
        r["item"].pk: r for r in client.get(reverse("history", args=[project.slug])).context["rows"]
    }
    assert rows[mrb_item.pk]["image"] == mrb_item.image
    assert rows[answers_item.pk]["image"] == first
    assert rows[text_item.pk]["image"] is None
    html = client.get(reverse("history", args=[project.slug])).content.decode()
    assert first.thumbnail_url in html and mrb_item.image.thumbnail_url in html
