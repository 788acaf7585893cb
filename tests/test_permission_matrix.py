"""The whole-site permission matrix for every HTML page and non-API endpoint.

The URL patterns are enumerated from the resolver: a pattern without a row
in MATRIX fails the test, so a new page cannot ship without deciding who may
see it. /api/ has its own matrix (tests/api/); /admin/ is checked here only
for "nobody but staff gets in".

Roles: anonymous, outsider (signed in, not a member), the project roles
annotator, curator, admin (members, not staff), a deactivated member (a
former admin of the project: a stranger now, images included) and a project
creator (may create projects, is not in this one: creating a project of
one's own grants nothing in anybody else's). Each GET and POST is sent
by every role inside a savepoint that is rolled back, so a POST that
changes something (delete, cancel, start) does not disturb the next request.
Annotator-visible pages are also searched for what annotators must never
see: model names, gold answers, other annotators' votes and pseudonyms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pytest
from django.contrib.auth.models import Permission
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from annotate.loop.service import Vote, claim_next_item, submit_judgement
from annotate.setup.team import create_invitation
from curation.models import (
    Evaluation,
    JudgeEndpoint,
    JudgeRun,
    Mix,
    MixSource,
    Release,
    Verdict,
)
from curation.releases import publishing
from tests.factories import make_item, make_member, make_project, make_user, png_bytes

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "outsider", "annotator", "curator", "admin", "deactivated", "creator")
# Signed in, and no active membership of the project under test: whatever a
# page answers the outsider, it answers them.
STRANGERS = ("deactivated", "creator")
LOGIN = "login"  # 302 to the sign-in page
NOT_ALLOWED = 405

# Strings annotators must never see (all on the item the annotator is given).
MODEL_NAMES = ("model-alpha-secret-7b", "model-beta-secret-13b")
GOLD = "gold-reference-answer-secret"
META = "source-metadata-secret"
OTHER_RATIONALE = "other-annotators-rationale-secret"
OTHER_PSEUDONYM = "pseudonym-of-another-annotator"


@dataclass(frozen=True)
class Row:
    """Expected status per role for GET and POST. `None` for a method means the
    view does not accept it (405 for everybody, signed in or not)."""

    get: dict[str, int | str] | None
    post: dict[str, int | str] | None
    note: str = ""


def with_strangers(statuses: dict[str, int | str], **overrides) -> dict[str, int | str]:
    """`statuses` of the five base roles, the strangers answered as the outsider."""
    return {**statuses, **dict.fromkeys(STRANGERS, statuses["outsider"]), **overrides}


def access(level: str, ok: int) -> dict[str, int | str]:
    """Statuses for a page open to `level`; `ok` is what an allowed role gets."""
    if level == "public":
        return dict.fromkeys(ROLES, ok)
    if level == "signed_in":
        return {"anonymous": LOGIN, **dict.fromkeys(ROLES[1:], ok)}
    if level == "member":
        base = {"anonymous": LOGIN, "outsider": 404, "annotator": ok, "curator": ok, "admin": ok}
    elif level == "curator":
        base = {"anonymous": LOGIN, "outsider": 404, "annotator": 403, "curator": ok, "admin": ok}
    elif level == "admin":
        base = {"anonymous": LOGIN, "outsider": 404, "annotator": 403, "curator": 403, "admin": ok}
    elif level == "assignee":  # the annotator's own assignment; anyone else's is a 404
        base = {"anonymous": LOGIN, "outsider": 404, "annotator": ok, "curator": 404, "admin": 404}
    else:
        raise ValueError(level)
    return with_strangers(base)


# Pages for whoever curates or administers some project (not tied to one).
MIXERS = with_strangers(
    {"anonymous": LOGIN, "outsider": 403, "annotator": 403, "curator": 200, "admin": 200}
)


# One row per named URL pattern outside /api/ and /admin/. The success codes
# are for a bare request: a POST without fields is a form error (400) where
# the view binds its form to any POST, the page again (200) where it binds
# only a non-empty one, a redirect where it acts on the URL alone.
MATRIX: dict[str, Row] = {
    # django.contrib.auth
    "login": Row(get=access("public", 200), post=access("public", 200), note="form errors"),
    "logout": Row(get=None, post=access("public", 302)),
    "password_change": Row(get=access("signed_in", 200), post=access("signed_in", 200)),
    "password_change_done": Row(
        get=access("signed_in", 200),
        post=access("signed_in", NOT_ALLOWED),
        note="login_required wraps the class view, so it signs in before checking the method",
    ),
    "password_reset": Row(get=access("public", 200), post=access("public", 200)),
    "password_reset_done": Row(get=access("public", 200), post=None),
    "password_reset_confirm": Row(
        get=access("public", 200), post=access("public", 200), note="invalid link page"
    ),
    "password_reset_complete": Row(get=access("public", 200), post=None),
    # site
    "healthz": Row(get=access("public", 200), post=None),
    "favicon": Row(get=access("public", 302), post=None, note="to the static icon"),
    "home": Row(get=access("signed_in", 200), post=None),
    "api_token": Row(get=access("signed_in", 200), post=access("signed_in", 302)),
    "media": Row(
        get=access("member", 200),
        post=None,
        note="an image is served to active members of a project that uses it (issue 29: "
        "the deactivated member was served it)",
    ),
    # annotate
    "project": Row(get=access("member", 200), post=None),
    "import": Row(get=access("admin", 200), post=access("admin", 400)),
    "work_start": Row(get=None, post=access("member", 302)),
    "work_done": Row(get=access("member", 200), post=None),
    "work_undo": Row(get=access("member", 302), post=None, note="nothing to undo: back"),
    "work_ahead": Row(get=None, post=access("member", 204), note="empty POST: nothing held"),
    "history": Row(get=access("member", 200), post=None),
    "work_item": Row(get=access("assignee", 200), post=None),
    "work_submit": Row(get=None, post=access("assignee", 400)),
    "work_skip": Row(get=None, post=access("assignee", 400)),
    # qualification (issue 36): the world's project does not require it
    "qualify": Row(get=access("member", 200), post=None, note="not required: the overview"),
    "qualify_start": Row(get=None, post=access("member", 302), note="refused: a message"),
    "qualify_answer": Row(get=None, post=access("member", 404), note="no such attempt"),
    "qualification_people": Row(get=access("curator", 200), post=None),
    "qualification_admit": Row(get=None, post=access("curator", 302), note="audited"),
    # curation
    "rule_settings": Row(
        get=access("admin", 200), post=access("admin", 200), note="empty POST: unbound form"
    ),
    "agreement": Row(get=access("curator", 200), post=None),
    "agreement_refresh": Row(get=None, post=access("curator", 302)),
    "agreement_status": Row(get=access("curator", 204), post=None, note="nothing computing"),
    "curation_queue": Row(get=access("curator", 200), post=None),
    "item_grid": Row(get=access("curator", 200), post=None),
    "item_grid_bulk": Row(get=None, post=access("curator", 302), note="errors as messages"),
    # check and qualification items made from settled items (curation.gold)
    "gold_items": Row(get=access("curator", 200), post=None),
    "make_gold": Row(get=None, post=access("curator", 302), note="errors as messages"),
    "gold_retire": Row(get=None, post=access("curator", 302), note="no reason: a message"),
    "gold_explanation": Row(
        get=None, post=access("curator", 404), note="the world's item is not a check item"
    ),
    "adjudicate": Row(get=access("curator", 200), post=None),
    "decide": Row(get=None, post=access("curator", 400)),
    # A pairwise world's item: the ranked decision answers 404 to a curator.
    "decide_ranked": Row(get=None, post=access("curator", 404), note="pairwise project: 404"),
    "accept_domain": Row(
        get=access("curator", 200), post=access("curator", 200), note="empty POST: unbound form"
    ),
    "audit_log": Row(get=access("curator", 200), post=None),
    "export_votes": Row(get=access("curator", 200), post=None, note="streamed CSV"),
    "export_verdicts": Row(get=access("curator", 200), post=None, note="streamed CSV"),
    "releases": Row(get=access("curator", 200), post=None),
    "release_new": Row(
        get=access("curator", 200), post=access("curator", 200), note="empty POST: unbound form"
    ),
    "release_detail": Row(get=access("curator", 200), post=None),
    "release_progress": Row(get=access("curator", 204), post=None),
    "release_retry": Row(
        get=None, post=access("curator", 302), note="a ready release: refused, back to its page"
    ),
    "release_download": Row(get=access("curator", 200), post=None),
    "release_diff": Row(get=access("curator", 200), post=None),
    "release_id_map": Row(
        get=access("curator", 200), post=None, note="re-keyed release: old-to-new IDs"
    ),
    "leaderboard": Row(get=access("curator", 200), post=access("curator", 400)),
    # training mixes (issue 22): across projects, for anyone who curates one;
    # a mix with a source they do not curate is a 404 (tests/curation/releases/mixes/test_mixes.py)
    "mixes": Row(get=MIXERS, post=None),
    "mix_new": Row(get=MIXERS, post=MIXERS, note="empty POST: unbound form"),
    "mix_detail": Row(get=MIXERS, post=None),
    "mix_progress": Row(get=dict(MIXERS, curator=204, admin=204), post=None, note="ready"),
    "mix_download": Row(get=MIXERS, post=None),
    # judges: endpoints (with their API keys) are the admins'; runs the curators'
    "judge_endpoints": Row(
        get=access("admin", 200), post=access("admin", 200), note="empty POST: unbound form"
    ),
    "judge_endpoint_edit": Row(
        get=access("admin", 200), post=access("admin", 200), note="empty POST: unbound form"
    ),
    "judge_endpoint_check": Row(get=None, post=access("admin", 302), note="result as a message"),
    "judge_endpoint_delete": Row(get=None, post=access("admin", 302)),
    "judge_run_new": Row(
        get=access("curator", 200), post=access("curator", 200), note="empty POST: unbound form"
    ),
    "judge_run": Row(get=access("curator", 200), post=None),
    "judge_run_progress": Row(get=access("curator", 204), post=None, note="the run stopped"),
    "judge_run_cancel": Row(get=None, post=access("curator", 302)),
    "judge_run_resume": Row(get=None, post=access("curator", 302)),
    # calibrated judges (issue 36): a project's judge runs and their report
    "calibration": Row(get=access("curator", 200), post=None),
    "calibration_refresh": Row(get=None, post=access("curator", 302)),
    "calibration_status": Row(get=access("curator", 204), post=None, note="nothing computing"),
    "project_judge_run_new": Row(
        get=None, post=access("curator", 400), note="empty POST: form errors"
    ),
    # setting a benchmark up (annotate.setup)
    "project_new": Row(
        get={"anonymous": LOGIN, **dict.fromkeys(ROLES[1:], 403), "creator": 200},
        post={"anonymous": LOGIN, **dict.fromkeys(ROLES[1:], 403), "creator": 200},
        note="needs the create-projects permission (the creator's); empty POST: unbound form",
    ),
    "project_import_roots": Row(
        get=None,
        post=access("admin", 403),
        note="site admins (superusers) only: tests/annotate/setup/test_import_roots_setting.py",
    ),
    "project_settings": Row(
        get=access("admin", 200), post=access("admin", 200), note="empty POST: unbound form"
    ),
    "project_archive": Row(get=None, post=access("admin", 302)),
    "project_delete": Row(get=None, post=access("admin", 302), note="not confirmed: back"),
    "domain_new": Row(
        get=access("admin", 200), post=access("admin", 200), note="empty POST: unbound form"
    ),
    "domain_edit": Row(
        get=access("admin", 200), post=access("admin", 200), note="empty POST: unbound form"
    ),
    "members": Row(get=access("admin", 200), post=access("admin", 400)),
    # the annotator table (issue 36 checks): curators see accuracy and pauses
    "annotators": Row(get=access("curator", 200), post=None),
    "annotator_reinstate": Row(get=None, post=access("curator", 302), note="nobody paused"),
    "member_action": Row(get=None, post=access("admin", 400), note="no action named"),
    "invitation_new": Row(get=None, post=access("admin", 400)),
    "invitation_revoke": Row(get=None, post=access("admin", 302)),
    "invitation_accept": Row(
        get=access("public", 404), post=access("public", 404), note="not a valid link"
    ),
    "users_bulk": Row(
        get={"anonymous": LOGIN, **dict.fromkeys(ROLES[1:], 403)},
        post={"anonymous": LOGIN, **dict.fromkeys(ROLES[1:], 403)},
        note="site admins (superusers) only",
    ),
    "markdown_preview": Row(get=None, post=access("signed_in", 200)),
    # label quality: leaderboard drill-down
    "entry_items": Row(get=access("curator", 200), post=None),
    "item_models": Row(get=access("curator", 200), post=None),
    # label quality: the suspected-errors queue
    "label_quality": Row(get=access("curator", 200), post=None),
    "label_quality_refresh": Row(get=None, post=access("curator", 302)),
    "label_quality_status": Row(get=access("curator", 204), post=None, note="nothing computing"),
    "label_quality_review": Row(get=access("curator", 404), post=None, note="not analysed"),
    "label_quality_decide": Row(get=None, post=access("curator", 404), note="not analysed"),
    # adaptive votes (issue 36)
    "adaptive_votes": Row(get=access("curator", 200), post=None),
    "adaptive_settings": Row(get=None, post=access("admin", 400), note="empty POST: form errors"),
}

# Pages an annotator may open, searched for what annotators must never see.
ANNOTATOR_PAGES = (
    "home",
    "project",
    "work_item",
    "work_done",
    "history",
    "api_token",
    "qualify",
)


def site_patterns() -> list[tuple[str, str]]:
    """(name, route) of every URL pattern outside /api/ and /admin/."""

    def walk(patterns, prefix=""):
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, route)
            elif isinstance(pattern, URLPattern):
                yield pattern.name or "", route

    return [
        (name, route)
        for name, route in walk(get_resolver().url_patterns)
        if not route.startswith(("api/", "admin/"))
    ]


# --- The world every request runs against ----------------------------------------------


@dataclass
class World:
    users: dict[str, object]
    kwargs: dict[str, object]
    secrets: tuple[str, ...] = field(default=())


@pytest.fixture
def world() -> World:
    project = make_project(slug="matrix", votes_per_item=3)
    pref = project.domains.get(slug="general_preference")
    creator = make_user()
    creator.user_permissions.add(Permission.objects.get(codename="add_project"))
    users = {
        "outsider": make_user(),
        "annotator": make_member(project, role="annotator"),
        "curator": make_member(project, role="curator"),
        "admin": make_member(project, role="admin"),
        "deactivated": make_member(project, role="admin", is_active=False),
        "creator": creator,
    }
    # The item the annotator will be given: model names, gold and source
    # metadata, and two votes by others with rationales and pseudonyms.
    item = make_item(
        project,
        domain=pref,
        model_1=MODEL_NAMES[0],
        model_2=MODEL_NAMES[1],
        gold_choice="2",
        reference_answer=GOLD,
        meta={"format": "pairs", "original_label": "2", "source": {"note": META}},
    )
    Verdict.objects.create(item=item, project=project)
    for n in range(2):
        voter = make_member(project, pseudonym=f"{OTHER_PSEUDONYM}-{n}")
        assignment = claim_next_item(project=project, annotator=voter)
        submit_judgement(
            assignment_id=assignment.pk,
            annotator=voter,
            vote=Vote(choice="1", rationale=f"{OTHER_RATIONALE}-{n}"),
        )
    default_storage.save(item.image.file, ContentFile(png_bytes()))
    own = claim_next_item(project=project, annotator=users["annotator"])
    assert own.item_id == item.pk
    # A contested item for the curation pages.
    contested = make_item(project, domain=pref)
    Verdict.objects.create(item=contested, project=project, status="contested")
    # A ready release with its archive, an endpoint and a run.
    folder, archive = publishing.published_names(project.slug, "v1")
    publishing.release_storage().save(archive, ContentFile(b"PK\x05\x06" + b"\0" * 18))
    release = Release.objects.create(
        project=project,
        version="v1",
        domains=["general_preference"],
        status="ready",
        folder=folder,
        archive=archive,
        size_bytes=22,
        sha256="0" * 64,
        rekey_salt="secret",
    )
    endpoint = JudgeEndpoint.objects.create(
        project=project, name="judge", base_url="http://127.0.0.1:9/v1", model="m"
    )
    run = JudgeRun.objects.create(
        release=release,
        endpoint=endpoint,
        name="judge",
        base_url=endpoint.base_url,
        model="m",
        temperature=0,
        max_tokens=16,
        timeout_seconds=1,
        status="failed",
    )
    mix_folder, mix_archive = publishing.published_names("m", "v1", root="mixes")
    publishing.release_storage().save(mix_archive, ContentFile(b"PK\x05\x06" + b"\0" * 18))
    mix = Mix.objects.create(
        name="m",
        version="v1",
        status="ready",
        folder=mix_folder,
        archive=mix_archive,
        size_bytes=22,
        sha256="0" * 64,
    )
    MixSource.objects.create(mix=mix, position=0, project=project, release=release)
    invitation = create_invitation(actor=users["admin"], project=project).invitation
    evaluation = Evaluation.objects.create(release=release, name="entry", predictions="p.jsonl")
    kwargs = {
        "invitation_id": invitation.pk,
        "user_id": users["annotator"].pk,
        "slug": project.slug,
        "evaluation_id": evaluation.pk,
        "assignment_id": own.pk,
        "attempt_id": 1,  # none: a qualification attempt's answer is a 404
        "item_id": contested.pk,
        "domain_slug": pref.slug,
        "release_id": release.pk,
        "endpoint_id": endpoint.pk,
        "run_id": run.pk,
        "mix_id": mix.pk,
        "path": item.image.file,
        "uidb64": "MQ",
        "token": "set-password",
    }
    return World(users=users, kwargs=kwargs)


def url_of(name: str, route: str, kwargs: dict) -> str:
    needed = re.findall(r"<(?:\w+:)?(\w+)>", route)
    missing = [k for k in needed if k not in kwargs]
    assert not missing, f"{name}: give the world a value for {missing}"
    return reverse(name, kwargs={k: kwargs[k] for k in needed})


def client_for(world: World, role: str, **options) -> Client:
    client = Client(**options)
    if role != "anonymous":
        client.force_login(world.users[role])
    return client


def send(client: Client, method: str, url: str):
    """One request whose effects are rolled back afterwards."""

    class Undo(Exception):
        pass

    response = None
    try:
        with transaction.atomic():
            response = getattr(client, method)(url)
            raise Undo
    except Undo:
        pass
    return response


def mismatch(response, expected: int | str) -> str | None:
    """How the response differs from the expected status, or None."""
    if expected == LOGIN:
        if response.status_code != 302 or not response["Location"].startswith(reverse("login")):
            return f"got {response.status_code} {response.get('Location', '')}, want sign-in"
        return None
    if response.status_code != expected:
        return f"got {response.status_code}, want {expected}"
    return None


def check(response, expected: int | str, context: str) -> None:
    problem = mismatch(response, expected)
    assert problem is None, f"{context}: {problem}"


# --- The matrix ------------------------------------------------------------------------


def test_every_url_pattern_has_a_row_in_the_matrix():
    patterns = site_patterns()
    unnamed = [route for name, route in patterns if not name]
    assert not unnamed, f"give these patterns a name and a row in MATRIX: {unnamed}"
    names = {name for name, _ in patterns}
    missing = sorted(names - set(MATRIX))
    assert not missing, f"add rows to MATRIX in {__file__} for: {missing}"
    stale = sorted(set(MATRIX) - names)
    assert not stale, f"MATRIX has rows for patterns that no longer exist: {stale}"


@pytest.mark.parametrize("role", ROLES)
def test_every_page_answers_each_role_as_the_matrix_says(world, role):
    client = client_for(world, role)
    wrong = []
    for name, route in site_patterns():
        row = MATRIX[name]
        url = url_of(name, route, world.kwargs)
        for method, expected in (("get", row.get), ("post", row.post)):
            if role != "anonymous":
                client.force_login(world.users[role])  # logout and the like sign out
            response = send(client, method, url)
            problem = mismatch(response, NOT_ALLOWED if expected is None else expected[role])
            if problem:
                wrong.append(f"{method.upper()} {url} ({name}): {problem}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("role", ["anonymous", "annotator", "admin"])
def test_every_post_without_a_csrf_token_is_refused(world, role):
    """CSRF is on everywhere: a POST without the token is 403 before any view runs
    (so for anonymous users too, ahead of the sign-in redirect). Only a view's
    body check (common.body_guard) answers earlier, from the URL alone and
    before anything reads the body: with the refusal the view itself gives
    that role (it never lets anything through that CSRF would stop)."""
    client = client_for(world, role, enforce_csrf_checks=True)
    for name, route in site_patterns():
        if MATRIX[name].post is None:
            continue
        url = url_of(name, route, world.kwargs)
        response = send(client, "post", url)
        if b"CSRF" not in response.content:
            assert response.status_code in (403, 404), (role, url, response.status_code)
            check(response, MATRIX[name].post[role], f"{role} POST {url}, body check")
            continue
        assert response.status_code == 403, (role, url, response.status_code)


@pytest.mark.parametrize(
    ("role", "name"),
    [
        ("admin", "import"),
        ("admin", "judge_endpoint_delete"),
        ("curator", "agreement_refresh"),
        ("curator", "decide"),
        ("annotator", "work_submit"),
        ("annotator", "work_start"),
        ("anonymous", "login"),
    ],
)
def test_a_post_with_the_csrf_token_gets_through(world, role, name):
    """The other half of the CSRF proof: the same POST with the token from the
    cookie is answered as the matrix says."""
    client = client_for(world, role, enforce_csrf_checks=True)
    client.get(reverse("login"))  # sets the csrftoken cookie
    token = client.cookies["csrftoken"].value
    route = dict(site_patterns())[name]
    url = url_of(name, route, world.kwargs)
    response = client.post(url, {"csrfmiddlewaretoken": token})
    check(response, MATRIX[name].post[role], f"{role} POST {url} with token")


# --- /admin/ ---------------------------------------------------------------------------

ADMIN_URLS = (
    "/admin/",
    "/admin/annotate/item/",
    "/admin/annotate/project/add/",
    "/admin/auth/user/",
    "/admin/curation/verdict/",
)


@pytest.mark.parametrize("role", ROLES)
def test_admin_site_is_closed_to_everyone_but_staff(world, role):
    """Project admins are not Django staff: the admin site sends them (and
    everybody else without is_staff) to its sign-in page."""
    client = client_for(world, role)
    for url in ADMIN_URLS:
        response = client.get(url)
        assert response.status_code in (302, 403), (role, url, response.status_code)
        if response.status_code == 302:
            assert response["Location"].startswith("/admin/login/"), (role, url)
        response = send(client, "post", url)
        assert response.status_code in (302, 403), (role, "POST", url, response.status_code)


def test_admin_site_opens_for_staff(world):
    staff = make_user(is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(staff)
    for url in ADMIN_URLS:
        assert client.get(url).status_code == 200, url


# --- Annotator blindness ------------------------------------------------------------------


def test_annotator_pages_show_no_model_names_gold_metadata_or_other_votes(world):
    client = client_for(world, "annotator")
    forbidden = (*MODEL_NAMES, GOLD, META, OTHER_RATIONALE, OTHER_PSEUDONYM, "original_label")
    patterns = dict(site_patterns())
    for name in ANNOTATOR_PAGES:
        url = url_of(name, patterns[name], world.kwargs)
        response = client.get(url)
        assert response.status_code == 200, url
        html = response.content.decode()
        for secret in forbidden:
            assert secret not in html, f"{url} shows {secret!r}"
    # The secrets are real: the curator's adjudication page of the same item shows them.
    curator = client_for(world, "curator")
    item_id = world.users["annotator"].assignments.get().item_id
    page = curator.get(reverse("adjudicate", args=[world.kwargs["slug"], item_id])).content
    assert MODEL_NAMES[0].encode() in page
    assert f"{OTHER_RATIONALE}-0".encode() in page


def test_annotator_history_after_voting_shows_only_their_own_vote(world):
    client = client_for(world, "annotator")
    url = reverse("work_submit", args=[world.kwargs["assignment_id"]])
    response = client.post(url, {"choice": "left", "confidence": "2", "rationale": "mine-own"})
    assert response.status_code == 302
    html = client.get(reverse("history", args=[world.kwargs["slug"]])).content.decode()
    assert "mine-own" in html
    for secret in (*MODEL_NAMES, GOLD, OTHER_RATIONALE, OTHER_PSEUDONYM):
        assert secret not in html
