"""Every response carries the security headers with their exact values; stored
images are served only as the image type Pillow validated, sandboxed; downloads
are attachments with a safe name; /healthz reports the database and broker."""

import hashlib
import re

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import connection
from django.test import Client
from django.urls import reverse

from annotate.models import ImageAsset, Project
from config.celery import app as celery_app
from curation.releases.views import attachment_name
from tests.curation.releases.test_releases import built, make_release_project
from tests.factories import make_item, make_member, make_project, make_user, png_bytes

pytestmark = pytest.mark.django_db

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "media-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; "
    "frame-ancestors 'none'"
)
PERMISSIONS_POLICY = (
    "accelerometer=(), camera=(), geolocation=(), gyroscope=(), magnetometer=(), "
    "microphone=(), payment=(), usb=()"
)
EXPECTED = {
    "Content-Security-Policy": CSP,
    "Permissions-Policy": PERMISSIONS_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}


def security_headers(response) -> dict:
    return {name: response.get(name) for name in EXPECTED}


@pytest.mark.parametrize("url", ["/accounts/login/", "/healthz", "/no-such-page/"])
def test_anonymous_responses_carry_every_security_header(client, url):
    assert security_headers(client.get(url)) == EXPECTED


def test_signed_in_pages_carry_every_security_header(client):
    client.force_login(make_user())
    response = client.get(reverse("home"))
    assert response.status_code == 200
    assert security_headers(response) == EXPECTED


def test_csp_image_sources_can_name_an_object_store(settings):
    from config.security import content_security_policy

    settings.SECURE_CSP = {**settings.SECURE_CSP, "img-src": ["'self'", "https://s3.example"]}
    assert "img-src 'self' https://s3.example;" in content_security_policy(settings.SECURE_CSP)


def test_session_and_csrf_cookies_are_httponly_samesite_and_expire(client):
    make_user("alice")
    page = client.get("/accounts/login/")
    csrf = page.cookies["csrftoken"]
    assert csrf["httponly"] is True and csrf["samesite"] == "Lax"
    response = client.post(
        "/accounts/login/",
        {"username": "alice", "password": "pw", "csrfmiddlewaretoken": csrf.value},
    )
    assert response.status_code == 302
    session = response.cookies["sessionid"]
    assert session["httponly"] is True and session["samesite"] == "Lax"
    assert session["max-age"] == 12 * 3600  # SESSION_COOKIE_AGE's default
    # Development serves plain http; production turns Secure on (test_production_settings).
    assert session["secure"] == ""


# --- Stored images --------------------------------------------------------------


def store_image(*, fmt="PNG", stored_as_ext="png", thumbnail="") -> ImageAsset:
    data = png_bytes(fmt=fmt)
    sha = hashlib.sha256(data).hexdigest()
    name = f"images/{sha[:2]}/{sha}.{stored_as_ext}"
    default_storage.save(name, ContentFile(data))
    asset = ImageAsset.objects.create(
        sha256=sha,
        file=name,
        format=fmt,
        width=32,
        height=24,
        size_bytes=len(data),
        thumbnail=thumbnail,
    )
    # Images are served to members of a project that uses them.
    project = Project.objects.filter(slug="media-project").first() or make_project("media-project")
    make_item(project=project, image=asset)
    return asset


@pytest.fixture
def signed_in(client):
    project = Project.objects.filter(slug="media-project").first() or make_project("media-project")
    client.force_login(make_member(project))
    return client


def test_an_image_is_not_served_to_a_signed_in_user_outside_its_projects(signed_in):
    asset = store_image()
    outsider = Client()
    outsider.force_login(make_user())
    assert media(outsider, asset.file).status_code == 404
    assert media(signed_in, asset.file).status_code == 200


def media(client, name):
    return client.get(reverse("media", args=[name]))


def test_an_image_is_served_as_its_validated_format_with_nosniff_and_a_sandbox(signed_in):
    asset = store_image()
    response = media(signed_in, asset.file)
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Security-Policy"] == "sandbox; default-src 'none'"
    assert b"".join(response.streaming_content).startswith(b"\x89PNG")


def test_the_content_type_comes_from_the_validated_format_not_the_name(signed_in):
    # A JPEG stored under a .png name is still sent as what Pillow found.
    asset = store_image(fmt="JPEG", stored_as_ext="png")
    assert media(signed_in, asset.file)["Content-Type"] == "image/jpeg"


def test_a_thumbnail_is_served_as_webp(signed_in):
    asset = store_image()
    thumb = f"thumbs/{asset.sha256[:2]}/{asset.sha256}.webp"
    default_storage.save(thumb, ContentFile(b"RIFF....WEBP"))
    ImageAsset.objects.filter(pk=asset.pk).update(thumbnail=thumb)
    response = media(signed_in, thumb)
    assert response.status_code == 200
    assert response["Content-Type"] == "image/webp"
    assert response["Content-Security-Policy"] == "sandbox; default-src 'none'"


@pytest.mark.parametrize(
    "name",
    [
        "images/ab/page.html",  # in storage, but no image the importer stored
        "images/ab/drawing.svg",
        "images/../../settings.py",
        "releases/secret.zip",
    ],
)
def test_anything_but_a_stored_image_is_not_served(signed_in, name):
    if name.startswith("images/ab/"):
        default_storage.save(name, ContentFile(b"<script>alert(1)</script>"))
    assert media(signed_in, name).status_code == 404


def test_a_file_beside_a_known_image_with_its_hash_is_not_served(signed_in):
    asset = store_image()
    other = f"images/{asset.sha256[:2]}/{asset.sha256}.html"
    default_storage.save(other, ContentFile(b"<script>alert(1)</script>"))
    assert media(signed_in, other).status_code == 404


def test_images_need_a_signed_in_user(client):
    asset = store_image()
    response = media(client, asset.file)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


# --- Downloads ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "safe"),
    [
        ("demo-v1.0.zip", "demo-v1.0.zip"),
        ('demo-v1"; filename=x.exe', "demo-v1_filename_x.exe"),
        ("demo-v1é\r\nX-Evil: 1", "demo-v1_X-Evil_1"),
        ("..hidden", "hidden"),
        ("///", "_"),
        ("", "download"),
    ],
)
def test_attachment_names_keep_only_safe_characters(name, safe):
    assert attachment_name(name) == safe


def test_a_release_downloads_as_an_attachment_with_a_safe_name(client, tmp_path):
    project = make_release_project(tmp_path)
    release = built(project, version='v1"é;x')
    client.force_login(make_member(project, role="curator"))
    response = client.get(reverse("release_download", args=[project.slug, release.pk]))
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"] == 'attachment; filename="rel-v1_x.zip"'


# --- Health check ---------------------------------------------------------------------


def test_healthz_reports_database_and_broker_without_signing_in():
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "broker": "ok"}
    assert "no-cache" in response["Cache-Control"]


@pytest.fixture
def broker_nobody_listens_on():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    # The app reads the CELERY_-namespaced key, which shadows a plain one.
    saved = celery_app.conf.broker_url
    celery_app.conf.update(CELERY_BROKER_URL=f"redis://127.0.0.1:{port}/0")
    yield
    celery_app.conf.update(CELERY_BROKER_URL=saved)


def test_healthz_stays_up_when_only_the_broker_is_unreachable(broker_nobody_listens_on):
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "broker": "unreachable"}


def test_healthz_fails_when_the_database_is_unreachable(monkeypatch):
    def refuse(*args, **kwargs):
        raise connection.Database.OperationalError("connection refused")

    monkeypatch.setattr(connection, "cursor", refuse)
    response = Client().get("/healthz")
    assert response.status_code == 503
    assert response.json()["database"] == "unreachable"
    assert "refused" not in response.content.decode()  # anonymous: no details


def test_the_api_docs_page_hands_try_it_out_the_csrf_token_the_cookie_hides():
    project = make_project()
    client = Client(enforce_csrf_checks=True)
    client.force_login(make_member(project))
    page = client.get("/api/docs/")
    assert page.cookies["csrftoken"]["httponly"] is True
    token = re.search(r'data-csrf-token="([^"]+)"', page.content.decode()).group(1)
    url = f"/api/v1/projects/{project.slug}/assignments/next/"
    assert client.post(url).status_code == 403  # a session POST needs the token...
    assert client.post(url, HTTP_X_CSRFTOKEN=token).status_code == 204  # ...which it gets
