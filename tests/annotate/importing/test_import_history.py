"""Issue 31: an import leaves a trace in the setup history and the audit log
(who, how: page or API, options, counts, SHA-256 of each file); a refused
import leaves none."""

from __future__ import annotations

import hashlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.models import SetupEvent
from curation.models import AuditEvent
from tests.annotate.importing.public_sets import VL_DOMAIN_MAP, vl_rewardbench
from tests.annotate.importing.test_import_views import bundle_zip
from tests.factories import make_member, make_project

pytestmark = pytest.mark.django_db


def test_a_page_import_is_in_the_setup_history_and_the_audit_log(client):
    project = make_project(slug="hist")
    admin = make_member(project, role="admin")
    client.force_login(admin)
    upload = bundle_zip()
    digest = hashlib.sha256(upload.read()).hexdigest()
    upload.seek(0)
    response = client.post(reverse("import", args=[project.slug]), {"dataset": upload})
    assert response.status_code == 302

    event = SetupEvent.objects.get(project=project, action="import")
    assert event.actor == admin
    after = event.after
    assert after["via"] == "page" and after["dataset"] == "bundle.zip"
    assert after["dataset_sha256"] == digest
    assert after["counts"]["created"] == 2 and after["counts"]["images_stored"] == 2
    assert after["options"]["duplicates"] == "refuse" and after["options"]["conflicts"] == "refuse"

    audit = AuditEvent.objects.get(project=project, action="import")
    assert audit.item is None and audit.actor == admin and audit.after == after
    assert audit.reason == "bundle.zip: 2 created, 0 updated, 0 unchanged; 2 new images stored"

    settings_page = client.get(reverse("project_settings", args=[project.slug])).content.decode()
    assert digest in settings_page and "import" in settings_page
    log = client.get(reverse("audit_log", args=[project.slug]) + "?action=import").content
    assert b"bundle.zip: 2 created" in log


def test_a_refused_import_leaves_no_record(client):
    project = make_project(slug="hist")
    client.force_login(make_member(project, role="admin"))
    bad = SimpleUploadedFile("broken.json", b"[{")
    response = client.post(reverse("import", args=[project.slug]), {"dataset": bad})
    assert response.status_code == 400
    assert not SetupEvent.objects.filter(action="import").exists()
    assert not AuditEvent.objects.filter(action="import").exists()


def test_an_api_import_records_its_options_and_both_files():
    project = make_project(slug="bench")
    user = make_member(project, role="admin")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    public_set = vl_rewardbench()
    data, images = public_set.jsonl(), public_set.images_zip()
    response = api.post(
        "/api/v1/projects/bench/imports/",
        {
            "dataset": SimpleUploadedFile("vl.jsonl", data),
            "images": SimpleUploadedFile("images.zip", images),
            "duplicates": "keep-first",
            "domain_from": "id-prefix",
            "domain_map": VL_DOMAIN_MAP,
        },
        format="multipart",
    )
    assert response.status_code == 200, response.content
    after = SetupEvent.objects.get(project=project, action="import").after
    assert after["via"] == "api"
    assert after["dataset_sha256"] == hashlib.sha256(data).hexdigest()
    assert after["images_sha256"] == hashlib.sha256(images).hexdigest()
    assert after["options"]["duplicates"] == "keep-first"
    assert after["options"]["domain_from"] == "id-prefix"
    assert after["counts"]["created"] == response.json()["created"]
    assert after["counts"]["duplicates_skipped"] == response.json()["duplicates_skipped"] > 0
    assert AuditEvent.objects.get(project=project, action="import").after == after
