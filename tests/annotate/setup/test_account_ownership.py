"""Accounts belong to their owners (issue 29). Every path that can change a
password or an API token, tried by every role against every kind of account:

- the members page's "Password link" (the takeover the issue found: a project
  admin added the victim to their project, made the link and signed in as
  them), and the service behind it;
- the Django admin's password page and user change page;
- the Django admin's token pages (not registered);
- /account/token/ (the owner's own token only);
- /accounts/password_change/ (the owner, with the old password);
- set-password links from a bulk CSV (one use, then expired).

Roles: anonymous; outsider; annotator, curator, admin of the project; a
deactivated member; a project creator (not in the project); staff without
user rights; a staff site admin (auth.change_user, and the project's admin,
so the members page is theirs); a superuser. Accounts acted on: a plain
member, a staff member, a superuser member.
"""

from __future__ import annotations

import re
import time

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from annotate.models import SetupEvent
from annotate.setup import accounts, site_users
from tests.factories import make_member, make_project, make_user

pytestmark = pytest.mark.django_db

ROLES = (
    "anonymous",
    "outsider",
    "annotator",
    "curator",
    "admin",
    "deactivated",
    "creator",
    "staff",
    "site_admin",
    "superuser",
)
TARGETS = ("plain", "staff", "superuser")
NEW = "brand-New-secret-42"
LOGIN = "login"
ADMIN_LOGIN = "admin-login"


def permission(codename: str, app_label: str) -> Permission:
    return Permission.objects.get(codename=codename, content_type__app_label=app_label)


@pytest.fixture
def world():
    project = make_project(slug="team")
    change_user = permission("change_user", "auth")
    staff = make_user(is_staff=True)
    site_admin = make_member(project, make_user(is_staff=True), role="admin")
    site_admin.user_permissions.add(change_user, permission("view_user", "auth"))
    creator = make_user()
    creator.user_permissions.add(permission("add_project", "annotate"))
    actors = {
        "outsider": make_user(),
        "annotator": make_member(project, role="annotator"),
        "curator": make_member(project, role="curator"),
        "admin": make_member(project, role="admin"),
        "deactivated": make_member(project, role="admin", is_active=False),
        "creator": creator,
        "staff": staff,
        "site_admin": site_admin,
        "superuser": make_user(is_staff=True, is_superuser=True),
    }
    staff_target = make_member(project, make_user(is_staff=True))
    staff_target.user_permissions.add(change_user)
    targets = {
        "plain": make_member(project, make_user(email="plain@example.org")),
        "staff": staff_target,
        "superuser": make_member(project, make_user(is_staff=True, is_superuser=True)),
    }
    return project, actors, targets


def client_of(actors, role) -> Client:
    client = Client()
    if role != "anonymous":
        client.force_login(actors[role])
    return client


def allowed(role: str, target: str) -> bool:
    """The account rule: superusers for anyone, staff site admins for accounts
    that are neither staff nor superusers, nobody else."""
    return role == "superuser" or (role == "site_admin" and target == "plain")


def signs_in(username: str, password: str) -> bool:
    """Signing in on the log-in page works with these credentials."""
    client = Client()
    client.post(reverse("login"), {"username": username, "password": password})
    return "_auth_user_id" in client.session


def password_of(user) -> str:
    return get_user_model().objects.get(pk=user.pk).password


# --- The rule ------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ROLES[1:])
@pytest.mark.parametrize("target", TARGETS)
def test_the_rule_and_the_service_allow_only_site_admins(world, role, target):
    project, actors, targets = world
    actor, account = actors[role], targets[target]
    assert accounts.may_manage_account(actor, account) is allowed(role, target)
    if allowed(role, target):
        path = site_users.set_password_link(actor=actor, project=project, user=account)
        assert path.startswith("/accounts/reset/")
        assert SetupEvent.objects.filter(action="password_link_made", subject=account).exists()
    else:
        with pytest.raises(accounts.AccountRefused):
            site_users.set_password_link(actor=actor, project=project, user=account)
        assert not SetupEvent.objects.filter(action="password_link_made").exists()


def test_an_inactive_superuser_is_no_site_admin(world):
    _, actors, targets = world
    root = actors["superuser"]
    root.is_active = False
    assert not accounts.may_manage_account(root, targets["plain"])


# --- The members page ------------------------------------------------------------------------


def link_on_page(client) -> str | None:
    page = client.get(reverse("members", args=["team"])).content.decode()
    found = re.search(r'value="http://testserver(/accounts/reset/[^"]+)"', page)
    return found.group(1) if found else None


MEMBER_PAGE = {
    "anonymous": LOGIN,
    "outsider": 404,
    "annotator": 403,
    "curator": 403,
    "admin": 403,
    "deactivated": 404,
    "creator": 404,
    "staff": 404,
}


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("target", TARGETS)
def test_password_link_on_the_members_page_only_for_site_admins(world, role, target):
    _, actors, targets = world
    client = client_of(actors, role)
    account = targets[target]
    url = reverse("member_action", args=["team", account.pk])
    response = client.post(url, {"action": "password_link"})
    if allowed(role, target):
        assert response.status_code == 302
        assert link_on_page(client) is not None
        return
    expected = MEMBER_PAGE.get(role, 403)
    if expected == LOGIN:
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    else:
        assert response.status_code == expected
    assert not SetupEvent.objects.filter(action="password_link_made").exists()
    if role in ("admin", "site_admin"):
        assert link_on_page(client) is None


def test_the_takeover_of_the_issue_no_longer_works(world):
    """A project admin adds a victim by username, presses "Password link",
    opens it, sets a password and signs in as the victim: refused at the
    second step, and the victim's password is unchanged."""
    _, actors, _ = world
    victim = make_user("victim")
    other = make_project(slug="victims-own")
    make_member(other, victim, role="admin")
    before = password_of(victim)
    attacker = client_of(actors, "admin")
    added = attacker.post(
        reverse("members", args=["team"]), {"username": "victim", "role": "annotator"}
    )
    assert added.status_code == 302  # adding an existing account still works
    page = attacker.get(reverse("members", args=["team"])).content.decode()
    assert "victim" in page and "Password link" not in page
    response = attacker.post(
        reverse("member_action", args=["team", victim.pk]), {"action": "password_link"}
    )
    assert response.status_code == 403
    assert link_on_page(attacker) is None
    assert password_of(victim) == before
    assert not signs_in("victim", NEW)


@pytest.mark.parametrize(
    ("role", "buttons"),
    [("admin", set()), ("site_admin", {"plain"}), ("superuser", set(TARGETS))],
)
def test_the_members_page_offers_password_links_only_where_they_work(world, role, buttons):
    _, actors, targets = world
    page = client_of(actors, role).get(reverse("members", args=["team"])).content.decode()
    offered = set(re.findall(r"Password link<span class=\"visually-hidden\"> for (\w+)", page))
    assert {t for t in TARGETS if targets[t].username in offered} == buttons
    if role == "admin":
        assert not offered and "Password link" not in page


def test_a_site_admins_link_sets_the_password_once(world):
    _, actors, targets = world
    client = client_of(actors, "superuser")
    account = targets["plain"]
    client.post(reverse("member_action", args=["team", account.pk]), {"action": "password_link"})
    link = link_on_page(client)
    assert set_password_with(link, NEW).status_code == 302
    assert signs_in(account.username, NEW)
    # Used: the same link is dead.
    assert b'name="new_password1"' not in Client().get(link, follow=True).content


# --- The Django admin -------------------------------------------------------------------------

ADMIN_PAGE = {
    "anonymous": ADMIN_LOGIN,
    "outsider": ADMIN_LOGIN,
    "annotator": ADMIN_LOGIN,
    "curator": ADMIN_LOGIN,
    "admin": ADMIN_LOGIN,
    "deactivated": ADMIN_LOGIN,
    "creator": ADMIN_LOGIN,
    "staff": 403,
}


def check_refused(response, role):
    expected = ADMIN_PAGE.get(role, 403)
    if expected == ADMIN_LOGIN:
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
    else:
        assert response.status_code == expected


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("target", TARGETS)
def test_admin_password_page_only_for_site_admins(world, role, target):
    _, actors, targets = world
    account = targets[target]
    before = password_of(account)
    url = reverse("admin:auth_user_password_change", args=[account.pk])
    response = client_of(actors, role).post(
        url, {"password1": NEW, "password2": NEW, "usable_password": "true"}
    )
    if allowed(role, target):
        assert response.status_code == 302, response.content.decode()[:500]
        assert get_user_model().objects.get(pk=account.pk).check_password(NEW)
    else:
        check_refused(response, role)
        assert password_of(account) == before


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("target", TARGETS)
def test_admin_user_change_only_for_site_admins(world, role, target):
    """Changing someone's email then resetting by mail is a takeover too."""
    _, actors, targets = world
    account = targets[target]
    url = reverse("admin:auth_user_change", args=[account.pk])
    data = {
        "username": account.username,
        "email": "attacker@example.org",
        "is_active": "on",
        "date_joined_0": "2026-01-01",
        "date_joined_1": "00:00:00",
    }
    response = client_of(actors, role).post(url, data)
    stored = get_user_model().objects.get(pk=account.pk)
    if allowed(role, target):
        assert response.status_code == 302, response.content.decode()[:800]
        assert stored.email == "attacker@example.org"
    else:
        check_refused(response, role)
        assert stored.email == account.email


def test_a_staff_site_admin_cannot_grant_themselves_privileges(world):
    _, actors, _ = world
    me = actors["site_admin"]
    client = client_of(actors, "site_admin")
    url = reverse("admin:auth_user_change", args=[me.pk])
    response = client.post(
        url,
        {
            "username": me.username,
            "email": "",
            "is_active": "on",
            "is_staff": "on",
            "is_superuser": "on",
            "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00",
        },
    )
    assert response.status_code == 302
    me.refresh_from_db()
    assert not me.is_superuser


@pytest.mark.parametrize("role", ROLES)
def test_the_token_admin_is_gone_for_everyone(world, role):
    """A token made in the admin for someone else is a key to their account."""
    _, actors, targets = world
    client = client_of(actors, role)
    victim = targets["superuser"].pk
    responses = [
        client.get("/admin/authtoken/tokenproxy/"),
        client.post("/admin/authtoken/tokenproxy/add/", {"user": victim}),
    ]
    for response in responses:
        if role in ("staff", "site_admin", "superuser"):
            assert response.status_code == 404
        else:  # not staff: the admin's sign-in page, as for every admin URL
            check_refused(response, role)
    assert not Token.objects.exists()


# --- API tokens and one's own password -------------------------------------------------------


@pytest.mark.parametrize("role", ROLES)
def test_an_api_token_is_made_only_for_oneself(world, role):
    _, actors, targets = world
    victim = targets["superuser"]
    theirs = Token.objects.create(user=victim).key
    response = client_of(actors, role).post(
        reverse("api_token"), {"action": "create", "user": victim.pk, "user_id": victim.pk}
    )
    assert Token.objects.get(user=victim).key == theirs
    if role == "anonymous":
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
        assert Token.objects.count() == 1
    else:
        assert response.status_code == 200
        assert Token.objects.filter(user=actors[role]).count() == 1
        # Revoking ends one's own token only.
        client_of(actors, role).post(reverse("api_token"), {"action": "revoke"})
        assert not Token.objects.filter(user=actors[role]).exists()
        assert Token.objects.get(user=victim).key == theirs


@pytest.mark.parametrize("role", ROLES)
def test_password_change_needs_the_old_password_and_changes_only_ones_own(world, role):
    _, actors, targets = world
    client = client_of(actors, role)
    url = reverse("password_change")
    data = {"old_password": "wrong", "new_password1": NEW, "new_password2": NEW}
    response = client.post(url, data)
    if role == "anonymous":
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
        return
    assert response.status_code == 200  # the form again: the old password is wrong
    assert not actors[role].__class__.objects.get(pk=actors[role].pk).check_password(NEW)
    others = {name: password_of(user) for name, user in targets.items()}
    assert client.post(url, dict(data, old_password="pw")).status_code == 302
    assert get_user_model().objects.get(pk=actors[role].pk).check_password(NEW)
    assert {name: password_of(user) for name, user in targets.items()} == others


# --- Bulk CSV links ------------------------------------------------------------------------


def set_password_with(link: str, password: str):
    client = Client()
    form = client.get(link, follow=True)
    assert b'name="new_password1"' in form.content, form.content[:300]
    return client.post(
        form.redirect_chain[-1][0], {"new_password1": password, "new_password2": password}
    )


def csv_link(world) -> tuple[object, str]:
    _, actors, _ = world
    created = site_users.create_users_from_csv(
        actor=actors["superuser"], data=b"username,email,role\nnewbie,n@example.org,\n"
    )
    return created[0].user, created[0].set_password_path


def test_a_csv_accounts_link_works_once(world):
    user, link = csv_link(world)
    assert not user.has_usable_password()
    assert set_password_with(link, NEW).status_code == 302
    assert signs_in("newbie", NEW)
    page = Client().get(link, follow=True).content.decode()
    assert 'name="new_password1"' not in page
    assert "This link is not valid" in page


def test_a_csv_accounts_link_expires(world, settings):
    settings.PASSWORD_RESET_TIMEOUT = 1  # seconds
    _, link = csv_link(world)
    time.sleep(2.1)
    page = Client().get(link, follow=True).content.decode()
    assert 'name="new_password1"' not in page
    assert "This link is not valid" in page


@pytest.mark.parametrize("role", ["outsider", "admin", "creator", "staff", "site_admin"])
def test_only_superusers_create_accounts_from_a_csv(world, role):
    _, actors, _ = world
    with pytest.raises(site_users.SetupError):
        site_users.create_users_from_csv(
            actor=actors[role], data=b"username,email,role\nnewbie,,\n"
        )
    assert not get_user_model().objects.filter(username="newbie").exists()


def test_no_api_endpoint_takes_a_password_or_names_a_user_for_a_token():
    """The API has no path to an account: no request body field sets a
    password, and nothing makes a token (tokens come from /account/token/)."""
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    fields = set()
    for name, component in schema["components"]["schemas"].items():
        if name.endswith("Request"):
            fields |= {field.lower() for field in component.get("properties", {})}
    for path, operations in schema["paths"].items():
        assert "password" not in path.lower() and "auth-token" not in path.lower(), path
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                fields.add(parameter["name"].lower())
    assert fields, "the schema was read"
    assert not {f for f in fields if "password" in f}
    # `token` is an invitation's (joining a project); `max_tokens` a judge run's.
    assert {f for f in fields if "token" in f} <= {"token", "max_tokens"}
