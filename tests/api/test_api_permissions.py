"""Who may call what: every URL under /api/ is enumerated from the resolver
and must have a row here (a new endpoint without one fails the test)."""

import pytest
from django.contrib.auth.models import Permission
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.test import override_settings
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

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
from tests.factories import make_assignment, make_item, make_member, make_project, make_user

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "outsider", "annotator", "curator", "admin", "deactivated", "creator")
MODEL_NAMES = ("secret-model-a", "secret-model-b")


def row(anonymous, outsider, annotator, curator, admin, *, deactivated=None, creator=None):
    """Statuses per role. A deactivated member (a former admin of the project)
    and a project creator (may create projects, not in this one) are answered
    as the outsider unless given."""
    return {
        "anonymous": anonymous,
        "outsider": outsider,
        "annotator": annotator,
        "curator": curator,
        "admin": admin,
        "deactivated": outsider if deactivated is None else deactivated,
        "creator": outsider if creator is None else creator,
    }


PUBLIC = row(200, 200, 200, 200, 200)
MEMBERS = row(401, 404, 200, 200, 200)
CURATORS = row(401, 404, 403, 200, 200)
ADMINS = row(401, 404, 403, 403, 200)
# POSTs are sent empty: a caller who may use the endpoint gets 400 (nothing
# changes), one who may not gets 401/403/404 before the body is looked at.
CURATORS_POST = row(401, 404, 403, 400, 400)
OWN_ASSIGNMENT = row(401, 404, 200, 404, 404)
OWN_ASSIGNMENT_POST = row(401, 404, 400, 404, 404)

EXPECTED = {
    ("api_schema", "get"): PUBLIC,
    ("api_docs", "get"): PUBLIC,
    ("api_projects", "get"): row(401, 200, 200, 200, 200),
    ("api_domains", "get"): MEMBERS,
    ("api_import", "post"): row(401, 404, 403, 403, 400),
    ("api_next_assignment", "post"): MEMBERS,
    ("api_qualification", "get"): MEMBERS,
    ("api_qualification_annotators", "get"): CURATORS,
    ("api_qualification_admit", "post"): CURATORS_POST,
    ("api_assignment", "get"): OWN_ASSIGNMENT,
    ("api_assignment_image", "get"): OWN_ASSIGNMENT,
    ("api_assignment_part_image", "get"): OWN_ASSIGNMENT,
    ("api_assignment_part_media", "get"): OWN_ASSIGNMENT,
    ("api_assignment_part_media_image", "get"): OWN_ASSIGNMENT,
    ("api_submit_judgement", "post"): OWN_ASSIGNMENT_POST,
    ("api_skip_assignment", "post"): OWN_ASSIGNMENT_POST,
    ("api_verdicts", "get"): CURATORS,
    ("api_items", "get"): CURATORS,
    ("api_items_bulk", "post"): CURATORS_POST,
    # check and qualification items made from settled items (curation.gold)
    ("api_gold_items", "get"): CURATORS,
    ("api_gold_items", "post"): CURATORS_POST,
    ("api_gold_item", "patch"): CURATORS_POST,  # no explanation given
    ("api_gold_item_retire", "post"): CURATORS_POST,  # no reason given
    ("api_verdict", "get"): CURATORS,
    ("api_verdict_decision", "post"): CURATORS_POST,
    ("api_agreement", "get"): CURATORS,
    ("api_agreement_refresh", "post"): row(401, 404, 403, 202, 202),
    ("api_export_votes", "get"): CURATORS,  # streamed CSV
    ("api_export_verdicts", "get"): CURATORS,
    ("api_releases", "get"): CURATORS,
    ("api_releases", "post"): CURATORS_POST,
    ("api_release", "get"): CURATORS,
    ("api_release_download", "get"): row(401, 404, 403, 409, 409),
    ("api_release_id_map", "get"): row(401, 404, 403, 409, 409),
    ("api_release_retry", "post"): row(401, 404, 403, 409, 409),  # pending: nothing to retry
    ("api_evaluations", "get"): CURATORS,
    ("api_evaluations", "post"): CURATORS_POST,
    ("api_evaluation", "get"): CURATORS,
    # setting up (annotate.setup.api): empty bodies
    # only the creator may create (400: an empty body)
    ("api_projects", "post"): row(401, 403, 403, 403, 403, creator=400),
    ("api_project", "get"): MEMBERS,
    ("api_project", "patch"): row(401, 404, 403, 403, 200),  # nothing to change
    ("api_domains", "post"): row(401, 404, 403, 403, 400),
    ("api_domain", "patch"): row(401, 404, 403, 403, 200),
    ("api_members", "get"): ADMINS,
    ("api_annotators", "get"): CURATORS,
    ("api_annotator_reinstate", "post"): row(401, 404, 403, 409, 409),  # nobody paused
    ("api_members", "post"): row(401, 404, 403, 403, 400),
    ("api_member", "patch"): ADMINS,
    ("api_member", "delete"): row(401, 404, 403, 403, 204),  # a member who never voted
    ("api_invitations", "get"): ADMINS,
    ("api_invitations", "post"): row(401, 404, 403, 403, 201),  # every field has a default
    ("api_invitation", "delete"): row(401, 404, 403, 403, 204),
    ("api_invitation_accept", "post"): row(401, 400, 400, 400, 400),  # no token
    ("api_evaluation_items", "get"): CURATORS,
    ("api_item_predictions", "get"): CURATORS,
    ("api_label_quality", "get"): CURATORS,
    ("api_label_quality_refresh", "post"): CURATORS_POST,
    ("api_label_quality_suspects", "get"): CURATORS,
    ("api_label_quality_decision", "post"): CURATORS_POST,
    # adaptive votes (issue 36): curators read, admins change
    ("api_adaptive", "get"): CURATORS,
    ("api_adaptive", "put"): row(401, 404, 403, 403, 400),
    # training mixes: for whoever curates some project; the world's mix is pending
    ("api_mixes", "get"): row(401, 403, 403, 200, 200),
    ("api_mixes", "post"): row(401, 403, 403, 400, 400),
    ("api_mix", "get"): row(401, 403, 403, 200, 200),
    ("api_mix_download", "get"): row(401, 403, 403, 409, 409),
    # per-annotator statistics and the judge runner (curation.api.agreement, .judges)
    ("api_agreement_annotators", "get"): CURATORS,
    ("api_judge_endpoints", "get"): CURATORS,  # listed for the run form; never a key
    ("api_judge_endpoints", "post"): row(401, 404, 403, 403, 400),  # admins add them
    ("api_judge_runs", "get"): CURATORS,
    ("api_judge_runs", "post"): CURATORS_POST,
    ("api_judge_run", "get"): CURATORS,
    ("api_project_judge_runs", "get"): CURATORS,
    ("api_project_judge_runs", "post"): CURATORS_POST,
    ("api_calibration", "get"): CURATORS,
    ("api_calibration_refresh", "post"): row(401, 404, 403, 202, 202),
    ("api_judge_run_cancel", "post"): CURATORS,  # the world's run is pending
    ("api_judge_run_resume", "post"): row(401, 404, 403, 409, 409),  # pending: nothing to resume
}


def api_patterns():
    """(name, route, methods) of every URL pattern under /api/."""
    found = []

    def walk(patterns, prefix):
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, prefix + str(p.pattern))
            elif isinstance(p, URLPattern):
                route = prefix + str(p.pattern)
                if not route.startswith("api/"):
                    continue
                view = getattr(p.callback, "view_class", None) or getattr(p.callback, "cls", None)
                if view is not None:
                    methods = [
                        m for m in ("get", "post", "put", "patch", "delete") if hasattr(view, m)
                    ]
                else:
                    methods = ["get"]  # function views under /api/ are GET pages
                found.append((p.name, route, methods))

    walk(get_resolver().url_patterns, "")
    return found


def test_every_api_endpoint_has_a_row_in_the_matrix():
    enumerated = {(name, m) for name, _, methods in api_patterns() for m in methods}
    assert len(enumerated) >= 20
    missing = enumerated - set(EXPECTED)
    assert not missing, f"endpoints without a permission row: {sorted(missing)}"
    stale = set(EXPECTED) - enumerated
    assert not stale, f"rows for endpoints that no longer exist: {sorted(stale)}"


@pytest.fixture(scope="module")
def built_world(django_db_setup, django_db_blocker):
    """The matrix's world, built once for the module's ~420 cases inside a
    transaction that is rolled back after the last: each case runs in a
    savepoint inside it (pytest-django's per-test atomic), so what a case
    changes (a DELETE, a cancel) is rolled back before the next, exactly as
    when each case built its own world (~0.2 s each; docs/decisions.md,
    "CI time"). The outer transaction is never committed."""
    # The users' passwords hashed as in every test (tests/conftest.py's fast
    # hasher is a function-scoped setting, not in force yet here).
    fast = override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"])
    with django_db_blocker.unblock():
        outer = transaction.atomic()
        outer.__enter__()
        try:
            with fast:
                built = build_world()
            yield built
        finally:
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


@pytest.fixture
def world(built_world):
    """Per case: the item's image in this test's own MEDIA_ROOT."""
    users, kwargs, (image_name, sound_name, wave_name) = built_world
    default_storage.save(image_name, ContentFile(b"\x89PNG not really"))
    default_storage.save(sound_name, ContentFile(b"RIFF0000WAVEfmt "))
    default_storage.save(wave_name, ContentFile(b"RIFF0000WEBPVP8 "))
    return users, kwargs


def build_world():
    project = make_project(slug="perm", votes_per_item=3)
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
    item = make_item(project, model_1=MODEL_NAMES[0], model_2=MODEL_NAMES[1], gold_choice="2")
    item.live_assignments = 1
    item.save(update_fields=["live_assignments"])
    # A sound in the prompt (issue 35: the media endpoint serves it).
    from annotate.models import ItemPart
    from tests.factories import make_media

    sound = make_media("audio")
    sound.waveform = f"waves/{sound.sha256[:2]}/{sound.sha256}.webp"
    sound.save(update_fields=["waveform"])
    ItemPart.objects.create(item=item, slot="prompt", position=2, kind="audio", media=sound)
    assignment = make_assignment(item, users["annotator"])
    Verdict.objects.create(item=item, project=project)
    release = Release.objects.create(project=project, version="v1", domains=["vqa"])
    evaluation = Evaluation.objects.create(release=release, name="m", predictions="p.jsonl")
    invitation = create_invitation(actor=users["admin"], project=project)
    mix = Mix.objects.create(name="m", version="v1")
    MixSource.objects.create(mix=mix, position=0, project=project)
    endpoint = JudgeEndpoint.objects.create(
        project=project, name="judge", base_url="https://judge.example/v1", model="m"
    )
    run = JudgeRun.objects.create(
        release=release,
        endpoint=endpoint,
        name="run",
        base_url=endpoint.base_url,
        model="m",
        max_tokens=8,
        timeout_seconds=5,
    )
    kwargs = {
        "mix_id": mix.pk,
        "slug": project.slug,
        "domain_slug": "vqa",
        "user_id": users["annotator"].pk,
        "invitation_id": invitation.invitation.pk,
        "assignment_id": assignment.pk,
        "place": "prompt",
        "index": 0,
        "derivative": "waveform",
        "item_id": item.pk,
        "release_id": release.pk,
        "evaluation_id": evaluation.pk,
        "run_id": run.pk,
    }
    return users, kwargs, (item.image.file, sound.file, sound.waveform)


def url_for(route: str, kwargs: dict) -> str:
    from django.urls import reverse

    name = next(n for n, r, _ in api_patterns() if r == route)
    needed = {k: v for k, v in kwargs.items() if f"<{k}>" in route or f":{k}>" in route}
    return reverse(name, kwargs=needed)


CASES = [
    (name, route, method, role)
    for name, route, methods in api_patterns()
    for method in methods
    for role in ROLES
]


@pytest.mark.parametrize(
    ("name", "route", "method", "role"), CASES, ids=[f"{c[0]}-{c[2]}-{c[3]}" for c in CASES]
)
def test_permission_matrix(world, name, route, method, role):
    users, kwargs = world
    client = APIClient()
    if role != "anonymous":
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=users[role]).key}")
    url = url_for(route, kwargs)
    response = getattr(client, method)(url, {}, format="multipart" if method == "post" else None)
    expected = EXPECTED[(name, method)][role]
    assert response.status_code == expected, (url, response.content[:300])
    if route.startswith("api/v1/") and response.status_code >= 400:
        error = response.json()["error"]
        assert set(error) >= {"code", "message", "fields"}
    if role == "annotator" and response.get("Content-Type", "").startswith("application/json"):
        text = response.content.decode()
        for secret in (*MODEL_NAMES, "gold", "votes_1", "response_1"):
            assert secret not in text, (url, secret)
