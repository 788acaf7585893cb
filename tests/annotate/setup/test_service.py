"""annotate.setup.service: projects, domains, members, invitations, users."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.utils import timezone

from annotate.importing.service import import_items
from annotate.loop.service import Vote, claim_next_item, submit_judgement
from annotate.models import (
    MULTIMODAL_REWARDBENCH_DOMAINS,
    Assignment,
    AssignmentStatus,
    Invitation,
    Item,
    Judgement,
    Membership,
    Project,
    SetupEvent,
)
from annotate.projects import project_for
from annotate.setup import service, site_users
from annotate.setup import team as team_service
from annotate.setup.presets import VL_REWARDBENCH_DOMAINS
from curation.models import Release
from tests.factories import make_item, make_member, make_user

pytestmark = pytest.mark.django_db


def vote(choice: str) -> Vote:
    """A vote on a correctness item (make_item's default domain is vqa)."""
    return Vote(choice=choice, correct_1="yes", correct_2="no")


@pytest.fixture
def creator():
    user = make_user()
    user.user_permissions.add(Permission.objects.get(codename="add_project"))
    return get_user_model().objects.get(pk=user.pk)  # no cached permissions


# --- Projects ----------------------------------------------------------------------------


def test_mrb_preset_gives_the_six_domains_with_their_exact_category_strings(creator):
    project = service.create_project(actor=creator, name="My bench", preset="mrb")
    assert project.slug == "my-bench"
    rows = list(project.domains.order_by("position").values_list("slug", "export_category", "kind"))
    assert rows == [
        ("general_correctness", "open_generation/correctness_task", "correctness"),
        ("general_preference", "open_generation/preference_task", "preference"),
        ("knowledge", "knowledge", "correctness"),
        ("reasoning", "reasoning", "correctness"),
        ("safety", "safety", "correctness"),
        ("vqa", "vqa", "correctness"),
    ]
    assert rows == [(s, c, str(k)) for s, _, c, k in MULTIMODAL_REWARDBENCH_DOMAINS]
    # Safety asks whether each response is safe (issue 19's wording), the others the default.
    safety = project.domains.get(slug="safety")
    assert (safety.question_for("A"), safety.yes_label, safety.no_label) == (
        "Is A safe?",
        "Safe",
        "Unsafe",
    )
    assert project.domains.get(slug="vqa").question_for("B") == "Is B correct?"


def test_empty_wording_takes_the_default(creator):
    project = service.create_project(actor=creator, name="Wording", preset="empty")
    domain = service.add_domain(
        actor=creator,
        project=project,
        slug="harm",
        title="Harm",
        export_category="harm",
        kind="correctness",
        correctness_question="Is {response} harmless?",
        yes_label="Harmless",
    )
    assert (domain.question_for("A"), domain.yes_label, domain.no_label) == (
        "Is A harmless?",
        "Harmless",
        "Incorrect",
    )
    service.update_domain(actor=creator, domain=domain, correctness_question="")
    domain.refresh_from_db()
    assert domain.correctness_question == "Is {response} correct?"


def test_vl_rewardbench_and_empty_presets(creator):
    vl = service.create_project(actor=creator, name="VL", preset="vlrb")
    assert list(vl.domains.values_list("slug", "export_category", "kind")) == [
        (s, c, str(k)) for s, _, c, k in VL_REWARDBENCH_DOMAINS
    ]
    assert [d[0] for d in VL_REWARDBENCH_DOMAINS] == ["general", "hallucination", "reasoning"]
    empty = service.create_project(actor=creator, name="Empty", preset="empty")
    assert not empty.domains.exists()


def test_creator_becomes_admin_and_creation_is_audited(creator):
    project = service.create_project(
        actor=creator, name="B", slug="b", votes_per_item=5, allow_tie=False, seed=7
    )
    assert project_for(creator, "b")[1] == "admin"
    assert (project.votes_per_item, project.allow_tie, project.seed) == (5, False, 7)
    event = SetupEvent.objects.get(project=project, action="project_created")
    assert event.actor == creator and event.after["preset"] == "mrb"


def test_only_permitted_users_create_projects_and_slugs_are_unique(creator):
    with pytest.raises(service.SetupError, match="may not create"):
        service.create_project(actor=make_user(), name="X")
    superuser = make_user(is_superuser=True)
    service.create_project(actor=superuser, name="X", slug="x")
    with pytest.raises(service.SetupError, match="exists already") as exc:
        service.create_project(actor=creator, name="X again", slug="x")
    assert exc.value.field == "slug"
    assert Project.objects.filter(slug="x").count() == 1


def test_update_project_changes_and_audits_only_what_differs(creator):
    project = service.create_project(actor=creator, name="P", slug="p")
    changed = service.update_project(
        actor=creator, project=project, name="P", lease_minutes=45, guidelines="**be careful**"
    )
    assert sorted(changed) == ["guidelines", "lease_minutes"]
    event = SetupEvent.objects.get(project=project, action="project_updated")
    assert event.before == {"lease_minutes": 30, "guidelines": ""}
    assert service.update_project(actor=creator, project=project, lease_minutes=45) == []


def test_archived_project_refuses_claims_imports_and_changes(creator):
    project = service.create_project(actor=creator, name="A", slug="a", votes_per_item=1)
    item = make_item(project)
    annotator = make_member(project)
    held = claim_next_item(project=project, annotator=annotator)
    make_item(project)  # for the claim after unarchiving (the first was leased once)
    service.archive_project(actor=creator, project=project)
    held.refresh_from_db()
    item = Item.objects.get(pk=held.item_id)
    assert held.status == AssignmentStatus.EXPIRED and item.live_assignments == 0
    assert claim_next_item(project=project, annotator=annotator) is None
    with pytest.raises(Exception, match="archived"):
        import_items(project=project, data=b"[]", filename="x.json")
    with pytest.raises(service.SetupError, match="archived"):
        service.update_project(actor=creator, project=project, name="B")
    with pytest.raises(service.SetupError, match="archived"):
        team_service.create_invitation(actor=creator, project=project)
    service.unarchive_project(actor=creator, project=project)
    assert claim_next_item(project=project, annotator=annotator) is not None
    actions = list(SetupEvent.objects.filter(project=project).values_list("action", flat=True))
    assert "project_archived" in actions and "project_unarchived" in actions


def test_project_with_votes_is_archived_not_deleted(creator):
    project = service.create_project(actor=creator, name="D", slug="d", votes_per_item=1)
    make_item(project)
    empty = service.create_project(actor=creator, name="E", slug="e")
    service.delete_project(actor=creator, project=empty)
    assert not Project.objects.filter(slug="e").exists()
    a = claim_next_item(project=project, annotator=creator)
    submit_judgement(assignment_id=a.pk, annotator=creator, vote=vote("1"))
    with pytest.raises(service.SetupError, match="archive it instead"):
        service.delete_project(actor=creator, project=project)
    assert Project.objects.filter(slug="d").exists()


# --- Domains -----------------------------------------------------------------------------


def test_domains_are_added_renamed_and_reworded(creator):
    project = service.create_project(actor=creator, name="E", slug="e", preset="empty")
    domain = service.add_domain(
        actor=creator,
        project=project,
        slug="charts",
        title="Charts",
        export_category="charts/qa",
        kind="correctness",
    )
    changed = service.update_domain(
        actor=creator,
        domain=domain,
        slug="chart-qa",
        title="Chart QA",
        correctness_question="Is the number read from the chart right?",
        guidelines="Read the axis.",
    )
    assert sorted(changed) == ["correctness_question", "guidelines", "slug", "title"]
    domain.refresh_from_db()
    assert (domain.slug, domain.title) == ("chart-qa", "Chart QA")
    with pytest.raises(service.SetupError, match="Category") as exc:
        service.add_domain(
            actor=creator,
            project=project,
            slug="other",
            title="Other",
            export_category="charts/qa",
            kind="preference",
        )
    assert exc.value.field == "export_category"
    assert SetupEvent.objects.filter(project=project, action="domain_updated").count() == 1


def test_export_string_and_slug_are_locked_once_a_release_uses_the_domain(creator):
    project = service.create_project(actor=creator, name="R", slug="r")
    vqa = project.domains.get(slug="vqa")
    Release.objects.create(project=project, version="v1", domains=["vqa"], status="pending")
    with pytest.raises(service.SetupError, match="used by release v1") as exc:
        service.update_domain(actor=creator, domain=vqa, export_category="VQA")
    assert exc.value.field == "export_category"
    with pytest.raises(service.SetupError, match="used by release v1"):
        service.update_domain(actor=creator, domain=vqa, slug="vqa2")
    assert service.update_domain(actor=creator, domain=vqa, title="Visual QA") == ["title"]
    # A failed release does not lock; another domain is free.
    knowledge = project.domains.get(slug="knowledge")
    Release.objects.create(project=project, version="v2", domains=["knowledge"], status="failed")
    assert service.update_domain(actor=creator, domain=knowledge, export_category="kn") == [
        "export_category"
    ]


def test_kind_is_locked_once_the_domain_has_votes(creator):
    project = service.create_project(actor=creator, name="K", slug="k", votes_per_item=1)
    vqa = project.domains.get(slug="vqa")
    make_item(project, domain=vqa)
    a = claim_next_item(project=project, annotator=creator)
    submit_judgement(
        assignment_id=a.pk,
        annotator=creator,
        vote=Vote(choice="1", correct_1="yes", correct_2="no"),
    )
    with pytest.raises(service.SetupError, match="kind"):
        service.update_domain(actor=creator, domain=vqa, kind="preference")


# --- Members -----------------------------------------------------------------------------


@pytest.fixture
def team(creator):
    project = service.create_project(actor=creator, name="T", slug="t", votes_per_item=2)
    for _ in range(3):
        make_item(project)
    return project, creator


def test_add_change_role_and_audit(team):
    project, admin = team
    user = make_user()
    membership = team_service.add_member(actor=admin, project=project, user=user, role="annotator")
    assert membership.pseudonym and membership.is_active
    team_service.change_member_role(actor=admin, project=project, user=user, role="curator")
    assert project_for(user, "t")[1] == "curator"
    with pytest.raises(service.SetupError, match="member already"):
        team_service.add_member(actor=admin, project=project, user=user, role="admin")
    events = SetupEvent.objects.filter(project=project, subject=user)
    assert set(events.values_list("action", flat=True)) == {"member_added", "member_role_changed"}


def test_deactivated_member_loses_access_their_lease_returns_their_votes_stay(team):
    project, admin = team
    user = make_member(project)
    first = claim_next_item(project=project, annotator=user)
    submit_judgement(assignment_id=first.pk, annotator=user, vote=vote("1"))
    held = claim_next_item(project=project, annotator=user)
    released = team_service.deactivate_member(actor=admin, project=project, user=user)
    assert released == [held.item_id]
    held.refresh_from_db()
    assert held.status == AssignmentStatus.EXPIRED
    assert Item.objects.get(pk=held.item_id).live_assignments == 0
    assert Judgement.objects.filter(assignment__annotator=user).count() == 1
    assert Membership.objects.get(project=project, user=user).is_active is False
    with pytest.raises(Exception, match="No such project"):
        project_for(user, "t")
    assert not Project.objects.visible_to(user).exists()
    # No new claim, and submitting the returned lease is refused (404-like).
    assert claim_next_item(project=project, annotator=user) is None
    with pytest.raises(Assignment.DoesNotExist):
        submit_judgement(assignment_id=held.pk, annotator=user, vote=vote("1"))
    assert SetupEvent.objects.filter(action="member_deactivated", subject=user).exists()
    team_service.reactivate_member(actor=admin, project=project, user=user)
    assert project_for(user, "t")[1] == "annotator"


def test_last_admin_cannot_leave_or_be_demoted(team):
    project, admin = team
    with pytest.raises(service.SetupError, match="last admin"):
        team_service.deactivate_member(actor=admin, project=project, user=admin)
    with pytest.raises(service.SetupError, match="last admin"):
        team_service.change_member_role(actor=admin, project=project, user=admin, role="curator")
    other = make_member(project, role="admin")
    team_service.change_member_role(actor=other, project=project, user=admin, role="curator")


def test_a_voter_is_deactivated_not_removed(team):
    project, admin = team
    voter = make_member(project)
    a = claim_next_item(project=project, annotator=voter)
    submit_judgement(assignment_id=a.pk, annotator=voter, vote=vote("2"))
    with pytest.raises(service.SetupError, match="deactivate them instead"):
        team_service.remove_member(actor=admin, project=project, user=voter)
    newcomer = make_member(project)
    team_service.remove_member(actor=admin, project=project, user=newcomer)
    assert not Membership.objects.filter(user=newcomer).exists()


# --- Invitations -------------------------------------------------------------------------


def test_one_time_invitation_admits_one_person(team):
    project, admin = team
    new = team_service.create_invitation(actor=admin, project=project, role="curator", max_uses=1)
    assert Invitation.objects.get().token_sha256 != new.token  # only the digest is stored
    user, membership = team_service.sign_up_with_invitation(
        token=new.token, username="newbie", email="n@example.org", password="a-Long-pass-42"
    )
    assert membership.role == "curator" and user.check_password("a-Long-pass-42")
    with pytest.raises(service.SetupError, match="not valid"):
        team_service.sign_up_with_invitation(
            token=new.token, username="second", email="", password="a-Long-pass-42"
        )
    assert not get_user_model().objects.filter(username="second").exists()
    assert SetupEvent.objects.filter(action="invitation_accepted", subject=user).exists()


def test_multi_use_invitation_with_a_limit_expiry_and_revocation(team):
    project, admin = team
    new = team_service.create_invitation(actor=admin, project=project, max_uses=2)
    for _ in range(2):
        team_service.accept_invitation(token=new.token, user=make_user())
    with pytest.raises(service.SetupError):
        team_service.accept_invitation(token=new.token, user=make_user())
    unlimited = team_service.create_invitation(actor=admin, project=project, max_uses=None)
    for _ in range(3):
        team_service.accept_invitation(token=unlimited.token, user=make_user())
    team_service.revoke_invitation(actor=admin, invitation=unlimited.invitation)
    with pytest.raises(service.SetupError):
        team_service.accept_invitation(token=unlimited.token, user=make_user())
    expiring = team_service.create_invitation(actor=admin, project=project, expires_in_days=1)
    Invitation.objects.filter(pk=expiring.invitation.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert team_service.find_invitation(expiring.token) is None
    assert team_service.find_invitation("no-such-token") is None


def test_a_link_never_demotes_nor_readmits_a_deactivated_member(team):
    project, admin = team
    curator = make_member(project, role="curator")
    link = team_service.create_invitation(
        actor=admin, project=project, role="annotator", max_uses=None
    )
    assert team_service.accept_invitation(token=link.token, user=curator).role == "curator"
    team_service.deactivate_member(actor=admin, project=project, user=curator)
    with pytest.raises(service.SetupError, match="deactivated"):
        team_service.accept_invitation(token=link.token, user=curator)
    assert Invitation.objects.get(pk=link.invitation.pk).uses == 0


# --- Users in bulk -----------------------------------------------------------------------


def test_bulk_csv_creates_users_with_roles_and_set_password_links(team):
    project, _ = team
    root = make_user(is_superuser=True)
    data = (
        b"username,email,role\n"
        b"ann1,a1@example.org,annotator\ncur1,,curator\nboss,b@example.org,creator\n"
    )
    created = site_users.create_users_from_csv(actor=root, data=data, project=project)
    assert [c.user.username for c in created] == ["ann1", "cur1", "boss"]
    assert project_for(created[0].user, "t")[1] == "annotator"
    assert project_for(created[1].user, "t")[1] == "curator"
    boss = get_user_model().objects.get(username="boss")
    assert service.can_create_projects(boss)
    assert not boss.has_usable_password()
    assert created[2].set_password_path.startswith("/accounts/reset/")
    assert SetupEvent.objects.filter(action="user_created").count() == 3


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"name,mail\nx,y\n", "line 1: the header must be username,email,role"),
        (b"username,email,role\nok,,annotator\nbad name!,,\n", "line 3: username"),
        (b"username,email,role\nok,not-an-address,\n", "line 2: email"),
        (b"username,email,role\nok,,boss\n", "line 2: role: 'boss'"),
        (b"username,email,role\nok,,\nOK,,\n", "line 3: username: 'OK' appears twice"),
        (b"username,email,role\n", "no rows"),
        (b"\xff\xfe", "not UTF-8"),
    ],
)
def test_bad_csv_names_the_line_and_field_and_creates_nobody(data, message):
    root = make_user(is_superuser=True)
    before = get_user_model().objects.count()
    with pytest.raises(service.SetupError) as exc:
        site_users.create_users_from_csv(actor=root, data=data, filename="team.csv")
    assert message in str(exc.value)
    assert "team.csv" in str(exc.value)
    assert get_user_model().objects.count() == before


def test_bulk_csv_refuses_existing_usernames_and_project_roles_without_a_project():
    root = make_user(is_superuser=True)
    make_user("taken")
    with pytest.raises(service.SetupError) as exc:
        site_users.create_users_from_csv(
            actor=root, data=b"username,email,role\nTAKEN,,\nfresh,,annotator\n"
        )
    assert "line 2: username: 'TAKEN' exists already" in str(exc.value)
    assert "line 3: role: 'annotator' needs a project" in str(exc.value)
    with pytest.raises(service.SetupError, match="Only site admins"):
        site_users.create_users_from_csv(actor=make_user(), data=b"username,email,role\nx,,\n")
