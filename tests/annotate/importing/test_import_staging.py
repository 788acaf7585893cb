"""Issue 31: the import page keeps a refused attempt's files on the server,
under a token bound to the user and the project, for an hour."""

from __future__ import annotations

import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotate.importing import staging
from annotate.models import Item
from tests.annotate.importing.public_sets import VL_DOMAIN_MAP, vl_rewardbench
from tests.factories import make_member, make_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def project():
    return make_project(slug="bench")


def login(client, project, **kwargs):
    client.force_login(make_member(project, role="admin", **kwargs))
    return client


def first_attempt(client, project):
    vl = vl_rewardbench()
    response = client.post(
        reverse("import", args=[project.slug]),
        {
            "dataset": SimpleUploadedFile("vl.jsonl", vl.jsonl()),
            "images": SimpleUploadedFile("images.zip", vl.images_zip()),
        },
    )
    assert response.status_code == 400
    return response


def test_a_refused_vl_rewardbench_upload_imports_after_fixing_options_only(client, project):
    login(client, project)
    refused = first_attempt(client, project)
    problems = refused.context["problems"]
    # Missing domain and repeated IDs in one report, each once.
    assert len(problems) == 2
    assert "field 'category': is missing" in problems[0]
    assert "25 IDs occur more than once" in problems[1]
    token = refused.context["form"].data["staged"]
    assert b"Files kept from your last attempt" in refused.content
    assert b"vl.jsonl" in refused.content and b"images.zip" in refused.content

    accepted = client.post(
        reverse("import", args=[project.slug]),
        {
            "staged": token,
            "duplicates": "suffix",
            "domain_from": "id-prefix",
            "domain_map": VL_DOMAIN_MAP,
        },
    )
    assert accepted.status_code == 302, accepted.context and accepted.context["problems"]
    assert Item.objects.filter(project=project).count() == 105
    assert staging.find(refused.context["user"], project, token) is None  # removed once used


def test_a_form_error_also_keeps_the_files(client, project):
    login(client, project)
    vl = vl_rewardbench()
    response = client.post(
        reverse("import", args=[project.slug]),
        {"dataset": SimpleUploadedFile("vl.jsonl", vl.jsonl()), "domain_from": "field"},
    )
    assert response.status_code == 400
    assert response.context["form"].errors["domain_from"] == [
        "Name the field the domain comes from."
    ]
    assert response.context["form"].data["staged"]


def test_a_token_is_found_only_by_its_user_and_project(client, project):
    login(client, project)
    refused = first_attempt(client, project)
    token, owner = refused.context["form"].data["staged"], refused.context["user"]
    other_project = make_project(slug="other")
    make_member(other_project, user=owner, role="admin")
    stranger = make_member(project, role="admin")
    assert staging.find(owner, project, token) is not None
    assert staging.find(stranger, project, token) is None
    assert staging.find(owner, other_project, token) is None
    client.force_login(stranger)
    response = client.post(reverse("import", args=[project.slug]), {"staged": token})
    assert response.status_code == 400
    assert response.context["form"].errors["dataset"] == [
        "Upload a dataset file or give its server path."
    ]


def test_staged_files_expire_and_are_swept(client, project, settings):
    login(client, project)
    refused = first_attempt(client, project)
    token = refused.context["form"].data["staged"]
    user = refused.context["user"]
    assert staging.find(user, project, token) is not None
    assert staging.sweep(now=time.time() + staging.STAGED_SECONDS + 1) == 1
    assert staging.find(user, project, token) is None
    assert list((settings.DATA_DIR / "import-staging").rglob("*.jsonl")) == []


def test_a_user_keeps_at_most_a_few_staged_sets(client, project, settings):
    login(client, project)
    for _ in range(staging.MAX_STAGED_PER_USER + 2):
        first_attempt(client, project)
    [user_folder] = (settings.DATA_DIR / "import-staging").iterdir()
    assert len(list(user_folder.iterdir())) == staging.MAX_STAGED_PER_USER


def test_domain_source_is_a_choice_with_a_field_name(client, project):
    login(client, project)
    page = client.get(reverse("import", args=[project.slug])).content.decode()
    assert '<select name="domain_from"' in page
    assert 'name="domain_from_field"' in page
    vl = vl_rewardbench()
    for row in vl.rows:
        row["subset"] = "vqa"
    response = client.post(
        reverse("import", args=[project.slug]),
        {
            "dataset": SimpleUploadedFile("vl.jsonl", vl.jsonl()),
            "images": SimpleUploadedFile("images.zip", vl.images_zip()),
            "domain_from": "field",
            "domain_from_field": "subset",
            "duplicates": "keep-first",
        },
    )
    assert response.status_code == 302
    assert set(Item.objects.values_list("domain__slug", flat=True)) == {"vqa"}
