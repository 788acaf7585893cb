"""The setup pages in a browser's terms: forms, errors beside fields, links."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core import mail
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from annotate.loop.service import Vote, claim_next_item, submit_judgement
from annotate.models import Invitation, Membership, Project, SetupEvent
from annotate.setup import team
from annotate.setup.people import member_rows
from tests.factories import make_item, make_member, make_project, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def creator(client):
    user = make_user()
    user.user_permissions.add(Permission.objects.get(codename="add_project"))
    client.force_login(user)
    return user


def test_new_project_page_creates_a_project_from_the_preset(client, creator):
    page = client.get(reverse("project_new"))
    assert page.status_code == 200
    assert b"Multimodal RewardBench (six domains)" in page.content
    response = client.post(
        reverse("project_new"),
        {
            "name": "Charts bench",
            "slug": "charts",
            "description": "",
            "guidelines": "# Rules",
            "votes_per_item": 3,
            "escalation_votes": 1,
            "agree_share": 0.75,
            "licence": "CC-BY-4.0",
            "allow_tie": "on",
            "lease_minutes": 20,
            "seed": 11,
            "preset": "vlrb",
        },
    )
    assert response.status_code == 302 and response["Location"] == "/p/charts/"
    project = Project.objects.get(slug="charts")
    assert project.lease_minutes == 20 and project.require_rationale is False
    assert (project.escalation_votes, project.agree_share) == (1, 0.75)
    assert list(project.domains.values_list("slug", flat=True)) == [
        "general",
        "hallucination",
        "reasoning",
    ]
    assert Membership.objects.get(project=project, user=creator).role == "admin"


def test_home_offers_new_project_only_to_those_who_may(client, creator):
    assert b"New project" in client.get(reverse("home")).content
    client.force_login(make_user())
    page = client.get(reverse("home")).content
    assert b"New project" not in page and b"invitation link" in page


def test_new_project_errors_stand_beside_their_field(client, creator):
    make_project(slug="taken")
    response = client.post(
        reverse("project_new"),
        {"name": "X", "slug": "taken", "votes_per_item": 0, "lease_minutes": 5, "seed": 0},
    )
    assert response.status_code == 400
    assert "greater than or equal to 1" in response.content.decode()
    response = client.post(
        reverse("project_new"),
        {
            "name": "X",
            "slug": "taken",
            "votes_per_item": 3,
            "escalation_votes": 2,
            "agree_share": 0.8,
            "lease_minutes": 5,
            "seed": 0,
            "preset": "mrb",
        },
    )
    assert response.status_code == 400
    assert "A project with the slug &#x27;taken&#x27; exists already." in response.content.decode()
    assert Project.objects.filter(slug="taken").count() == 1


def test_guidelines_preview_is_sanitised_markdown(client, creator):
    response = client.post(
        reverse("markdown_preview") + "?field=guidelines",
        {"guidelines": "**bold** <script>alert(1)</script> [x](javascript:alert(1))"},
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "<strong>bold</strong>" in html
    assert "<script" not in html and 'href="javascript' not in html


@pytest.fixture
def admin_client(client):
    project = make_project(slug="team", votes_per_item=2)
    admin = make_member(project, role="admin")
    client.force_login(admin)
    return client, project, admin


def test_settings_page_saves_and_shows_history(admin_client):
    client, project, _ = admin_client
    data = {
        "name": "Team bench",
        "description": "d",
        "guidelines": "g",
        "licence": "",
        "lease_minutes": 15,
        "seed": 3,
    }
    response = client.post(reverse("project_settings", args=["team"]), data)
    assert response.status_code == 302
    project.refresh_from_db()
    assert (project.name, project.lease_minutes, project.allow_tie) == ("Team bench", 15, False)
    page = client.get(reverse("project_settings", args=["team"])).content.decode()
    assert "project_updated" in page and "open_generation/correctness_task" in page


def test_domain_edit_page_reports_a_release_lock_beside_the_field(admin_client):
    from curation.models import Release

    client, project, _ = admin_client
    Release.objects.create(project=project, version="v1", domains=["vqa"], status="pending")
    url = reverse("domain_edit", args=["team", "vqa"])
    data = {"slug": "vqa", "title": "VQA", "export_category": "VQA!", "kind": "correctness"}
    response = client.post(url, data)
    assert response.status_code == 400
    assert "used by release v1" in response.content.decode()
    data["export_category"] = "vqa"
    data["correctness_question"] = "Does it answer the question about the image?"
    assert client.post(url, data).status_code == 302
    assert (
        project.domains.get(slug="vqa").correctness_question
        == "Does it answer the question about the image?"
    )


def test_archive_and_unarchive_from_the_settings_page(admin_client):
    client, project, _ = admin_client
    client.post(reverse("project_archive", args=["team"]))
    project.refresh_from_db()
    assert project.archived_at is not None
    page = client.get(reverse("project", args=["team"])).content.decode()
    assert "Archived" in page
    client.post(reverse("project_archive", args=["team"]), {"unarchive": "1"})
    project.refresh_from_db()
    assert project.archived_at is None


def test_members_page_adds_changes_and_deactivates(admin_client):
    client, _project, _ = admin_client
    user = make_user("dana")
    response = client.post(
        reverse("members", args=["team"]), {"username": "DANA", "role": "annotator"}
    )
    assert response.status_code == 302
    url = reverse("member_action", args=["team", user.pk])
    client.post(url, {"action": "role", "role": "curator"})
    assert Membership.objects.get(user=user).role == "curator"
    client.post(url, {"action": "deactivate"})
    assert Membership.objects.get(user=user).is_active is False
    page = client.get(reverse("members", args=["team"])).content.decode()
    assert "deactivated" in page and "Reactivate" in page
    missing = client.post(
        reverse("members", args=["team"]), {"username": "nobody", "role": "annotator"}
    )
    assert missing.status_code == 400 and "invite them with a link" in missing.content.decode()


def test_member_of_another_project_is_a_404_on_member_action(admin_client):
    client, _project, _ = admin_client
    stranger = make_member(make_project())
    url = reverse("member_action", args=["team", stranger.pk])
    assert client.post(url, {"action": "deactivate"}).status_code == 404


def test_password_link_for_a_member_lets_them_set_a_password(admin_client):
    """A site admin's link (a project admin gets none: test_account_ownership.py)."""
    client, project, _ = admin_client
    member = make_member(project)
    client.force_login(make_user(is_superuser=True))
    client.post(reverse("member_action", args=["team", member.pk]), {"action": "password_link"})
    page = client.get(reverse("members", args=["team"])).content.decode()
    url = re.search(r'value="(http://testserver/accounts/reset/[^"]+)"', page).group(1)
    anonymous = client.__class__()
    response = anonymous.get(url, follow=True)
    assert b"Set a new password" in response.content
    form_url = response.redirect_chain[-1][0]
    done = anonymous.post(
        form_url, {"new_password1": "fresh-Secret-91", "new_password2": "fresh-Secret-91"}
    )
    assert done.status_code == 302
    member.refresh_from_db()
    assert member.check_password("fresh-Secret-91")
    assert SetupEvent.objects.filter(action="password_link_made", subject=member).exists()


def test_invitation_link_is_shown_once_and_signs_a_newcomer_up(admin_client):
    client, _project, _ = admin_client
    response = client.post(
        reverse("invitation_new", args=["team"]),
        {"role": "annotator", "uses": "one", "expires_in_days": 3, "note": "for Kim"},
    )
    assert response.status_code == 302
    page = client.get(reverse("members", args=["team"])).content.decode()
    link = re.search(r'value="http://testserver(/join/[^"]+)"', page).group(1)
    again = client.get(reverse("members", args=["team"])).content.decode()
    assert link not in again and "for Kim" in again
    newcomer = client.__class__()
    assert b"Create account and join" in newcomer.get(link).content
    response = newcomer.post(
        link,
        {
            "username": "kim",
            "email": "kim@example.org",
            "password1": "kim-Secret-77",
            "password2": "kim-Secret-77",
        },
    )
    assert response.status_code == 302 and response["Location"] == "/p/team/"
    kim = get_user_model().objects.get(username="kim")
    assert Membership.objects.get(user=kim).role == "annotator"
    assert newcomer.get("/p/team/").status_code == 200
    # One-time: the next person finds it used.
    assert client.__class__().get(link).status_code == 404
    assert Invitation.objects.get().uses == 1


def test_signed_in_person_joins_with_one_click(admin_client):
    client, project, admin = admin_client
    new = team.create_invitation(actor=admin, project=project, role="curator", max_uses=None)
    someone = make_user()
    client.force_login(someone)
    path = new.path
    assert b"Join the project" in client.get(path).content
    assert client.post(path).status_code == 302
    assert Membership.objects.get(user=someone).role == "curator"


def test_revoked_invitation_stops_working(admin_client):
    client, project, admin = admin_client
    new = team.create_invitation(actor=admin, project=project)
    client.post(reverse("invitation_revoke", args=["team", new.invitation.pk]))
    assert client.__class__().get(new.path).status_code == 404


def test_members_page_runs_a_constant_number_of_queries(admin_client):
    client, project, _ = admin_client
    url = reverse("members", args=["team"])

    def queries():
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(url).status_code == 200
        return len(ctx.captured_queries)

    few = queries()
    for _ in range(6):
        make_item(project)
    for _ in range(5):
        voter = make_member(project)
        a = claim_next_item(project=project, annotator=voter)
        submit_judgement(
            assignment_id=a.pk,
            annotator=voter,
            vote=Vote(choice="1", correct_1="yes", correct_2="no"),
        )
    team.create_invitation(actor=make_user(is_superuser=True), project=project)
    assert queries() == few


def test_agreement_with_majority_equals_a_reference_count(admin_client):
    """Leave-one-out: each current vote against the plurality of the other
    current votes on its item; items without a strict plurality not counted."""
    _, project, _ = admin_client
    users = [make_member(project) for _ in range(4)]
    ballots = {  # item -> choices of users[0..3] (None: did not vote)
        0: ["1", "1", "2", None],
        1: ["2", "2", "2", "1"],
        2: ["tie", "1", "2", None],
        3: ["1", "tie", "tie", "tie"],
    }
    project.votes_per_item = 4
    project.save()
    items = [make_item(project, votes_needed=4) for _ in ballots]
    from tests.factories import make_assignment, make_judgement

    for n, choices in ballots.items():
        for user, choice in zip(users, choices, strict=True):
            if choice:
                make_judgement(
                    make_assignment(
                        items[n], user, status="submitted", submitted_at=timezone.now()
                    ),
                    choice,
                )
    rows = {r.membership.user_id: r for r in member_rows(project)}

    def reference(k):
        agree = comparable = 0
        for choices in ballots.values():
            mine = choices[k]
            if mine is None:
                continue
            others = [c for i, c in enumerate(choices) if i != k and c]
            counts = {c: others.count(c) for c in ("1", "2", "tie")}
            top = max(counts.values())
            winners = [c for c, v in counts.items() if v == top]
            if top and len(winners) == 1:
                comparable += 1
                agree += winners[0] == mine
        return agree, comparable

    for k, user in enumerate(users):
        row = rows[user.pk]
        assert (row.agreeing, row.comparable) == reference(k)
        if row.comparable:
            assert abs(row.agreement - reference(k)[0] / reference(k)[1]) < 1e-9


def test_bulk_users_page_for_site_admins(client):
    root = make_user(is_superuser=True)
    client.force_login(root)
    project = make_project(slug="bulk")
    upload = SimpleUploadedFile(
        "team.csv", b"username,email,role\nzoe,z@example.org,annotator\nyan,,\n", "text/csv"
    )
    response = client.post(reverse("users_bulk"), {"file": upload, "project": project.pk})
    assert response.status_code == 200
    html = response.content.decode()
    assert html.count("/accounts/reset/") == 2
    assert Membership.objects.get(user__username="zoe", project=project).role == "annotator"
    bad = SimpleUploadedFile("team.csv", b"username,email,role\nzoe,,\n", "text/csv")
    response = client.post(reverse("users_bulk"), {"file": bad})
    assert response.status_code == 400
    assert "team.csv: line 2: username: &#x27;zoe&#x27; exists already" in response.content.decode()


def test_superuser_may_create_projects_and_sees_the_users_link(client):
    client.force_login(make_user(is_superuser=True))
    assert client.get(reverse("project_new")).status_code == 200
    assert b'href="/users/new/"' in client.get(reverse("home")).content


def test_password_change_and_reset_pages_are_the_sites_own(client):
    user = make_user(email="u@example.org")
    client.force_login(user)
    page = client.get(reverse("password_change"))
    assert b"Change your password" in page.content and b"Django administration" not in page.content
    response = client.post(
        reverse("password_change"),
        {"old_password": "pw", "new_password1": "n3w-Secret-x", "new_password2": "n3w-Secret-x"},
    )
    assert response.status_code == 302
    client.logout()
    client.post(reverse("password_reset"), {"email": "u@example.org"})
    assert len(mail.outbox) == 1 and "/accounts/reset/" in mail.outbox[0].body
