"""Videos and audio files served as players need them (issue 35): byte
ranges (206, 416, suffix and open ranges, If-Range), the same membership rule
as images, the content type found at import, and the hand-offs to a proxy
(X-Accel-Redirect) or to the bucket (a presigned URL)."""

from __future__ import annotations

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.test import Client
from django.urls import reverse

from annotate.models import media_part, text_part, write_item_content
from demo.clips import video_bytes
from tests.factories import make_item, make_media, make_member, make_project, make_user

pytestmark = pytest.mark.django_db

DATA = video_bytes(seconds=1)


def stored_video(project, **fields):
    asset = make_media("video", size_bytes=len(DATA), **fields)
    default_storage.save(asset.file, ContentFile(DATA))
    item = make_item(project=project)
    write_item_content(item, [text_part("Which?")], [[media_part(asset)], [text_part("b")]])
    return asset


@pytest.fixture
def project():
    return make_project()


@pytest.fixture
def member(client, project):
    client.force_login(make_member(project))
    return client


def get(client, name, **headers):
    return client.get(reverse("media", args=[name]), headers=headers)


def body(response) -> bytes:
    return b"".join(response.streaming_content)


def test_the_whole_file_with_its_type_and_range_support(member, project):
    asset = stored_video(project)
    response = get(member, asset.file)
    assert response.status_code == 200
    assert response["Content-Type"] == "video/mp4"
    assert response["Accept-Ranges"] == "bytes"
    assert response["Content-Security-Policy"] == "sandbox; default-src 'none'"
    assert body(response) == DATA


@pytest.mark.parametrize(
    ("header", "start", "end"),
    [("bytes=0-99", 0, 99), ("bytes=100-", 100, len(DATA) - 1), ("bytes=-50", len(DATA) - 50,
     len(DATA) - 1), ("bytes=10-999999999", 10, len(DATA) - 1), ("bytes=5-9, 20-30", 5, 9)],
)  # fmt: skip
def test_a_byte_range_is_answered_with_206_and_exactly_those_bytes(
    member, project, header, start, end
):
    asset = stored_video(project)
    response = get(member, asset.file, Range=header)
    assert response.status_code == 206
    assert response["Content-Range"] == f"bytes {start}-{end}/{len(DATA)}"
    assert int(response["Content-Length"]) == end - start + 1
    assert body(response) == DATA[start : end + 1]


def test_a_range_outside_the_file_is_416_and_a_foreign_unit_gets_the_whole(member, project):
    asset = stored_video(project)
    response = get(member, asset.file, Range=f"bytes={len(DATA)}-")
    assert response.status_code == 416
    assert response["Content-Range"] == f"bytes */{len(DATA)}"
    assert get(member, asset.file, Range="items=0-1").status_code == 200


def test_if_range_with_another_validator_gets_the_whole_file(member, project):
    asset = stored_video(project)
    same = get(member, asset.file, Range="bytes=0-9", **{"If-Range": f'"{asset.sha256}"'})
    assert same.status_code == 206
    other = get(member, asset.file, Range="bytes=0-9", **{"If-Range": '"something-else"'})
    assert other.status_code == 200 and body(other) == DATA


def test_strangers_and_former_members_get_404(project):
    asset = stored_video(project)
    stranger = Client()
    stranger.force_login(make_user())
    assert get(stranger, asset.file).status_code == 404
    assert get(stranger, asset.file, Range="bytes=0-9").status_code == 404
    former = Client()
    user = make_member(project)
    user.memberships.update(is_active=False)
    former.force_login(user)
    assert get(former, asset.file).status_code == 404
    other_project = Client()
    other_project.force_login(make_member(make_project()))
    assert get(other_project, asset.file).status_code == 404
    assert Client().get(reverse("media", args=[asset.file])).status_code == 302  # sign in


def test_posters_strips_and_waveforms_are_webp_under_the_same_rule(member, project):
    asset = stored_video(project, poster="posters/ab/x.webp")
    asset.poster = f"posters/{asset.sha256[:2]}/{asset.sha256}.webp"
    asset.save()
    default_storage.save(asset.poster, ContentFile(b"RIFF....WEBP"))
    response = get(member, asset.poster)
    assert response.status_code == 200 and response["Content-Type"] == "image/webp"
    # A name under a served prefix that is not one of the asset's own files.
    assert get(member, f"strips/{asset.sha256[:2]}/{asset.sha256}.webp").status_code == 404


def test_accel_hands_the_file_to_the_proxy_after_the_checks(member, project, settings):
    settings.MEDIA_SERVING = "accel"
    settings.MEDIA_ACCEL_PREFIX = "/protected-media/"
    asset = stored_video(project)
    response = get(member, asset.file, Range="bytes=0-9")
    assert response.status_code == 200 and response.content == b""
    assert response["X-Accel-Redirect"] == f"/protected-media/{asset.file}"
    assert response["Content-Type"] == "video/mp4"
    stranger = Client()
    stranger.force_login(make_user())
    assert get(stranger, asset.file).status_code == 404


def test_presigned_redirects_to_the_storage_url_after_the_checks(
    member, project, settings, monkeypatch
):
    settings.MEDIA_SERVING = "presigned"
    asset = stored_video(project)
    monkeypatch.setattr(
        default_storage, "url", lambda name: f"https://bucket.example/{name}?X-Amz-Signature=s"
    )
    response = get(member, asset.file)
    assert response.status_code == 302
    assert response["Location"] == f"https://bucket.example/{asset.file}?X-Amz-Signature=s"
    assert response["Cache-Control"] == "private, no-store"
    stranger = Client()
    stranger.force_login(make_user())
    assert get(stranger, asset.file).status_code == 404


def test_images_answer_ranges_too(member, project):
    from tests.test_security_headers import store_image

    asset = store_image()
    make_item(project=project, image=asset)
    response = get(member, asset.file, Range="bytes=0-7")
    assert response.status_code == 206 and body(response) == b"\x89PNG\r\n\x1a\n"


def test_the_api_gives_media_parts_blind_and_serves_them_with_ranges(project):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    from tests.factories import make_assignment

    asset = stored_video(project)
    item = asset.parts.get().item
    user = make_member(project)
    assignment = make_assignment(item, user)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    data = api.get(reverse("api_assignment", args=[assignment.pk])).json()
    content = data["content"]
    video = next(p for side in ("left", "right") for p in content[side] if p["kind"] == "video")
    assert video == {
        "kind": "video",
        "url": video["url"],
        "duration_ms": 2000,
        "content_type": "video/mp4",
        "width": 64,
        "height": 48,
        "fps": 25.0,
        "poster_url": None,  # made in the background (annotate.tasks.derive_media)
        "strip_url": None,
    }
    assert asset.sha256 not in str(data) and asset.file not in str(data)
    whole = api.get(video["url"])
    assert whole.status_code == 200 and body(whole) == DATA
    part = api.get(video["url"], headers={"Range": "bytes=4-11"})
    assert part.status_code == 206 and body(part) == DATA[4:12]
    stranger = APIClient()
    stranger.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=make_user()).key}")
    assert stranger.get(video["url"]).status_code == 404
    # Not made yet: 404 with why; then made, served blind at its own URL.
    missing = api.get(f"{video['url']}poster/")
    assert missing.status_code == 404 and "not made yet" in missing.json()["error"]["message"]
    assert api.get(f"{video['url']}waveform/").status_code == 404  # a video has none
    asset.poster = f"posters/{asset.sha256[:2]}/{asset.sha256}.webp"
    asset.save(update_fields=["poster"])
    default_storage.save(asset.poster, ContentFile(b"RIFF0000WEBPVP8 poster"))
    video = next(
        p
        for side in ("left", "right")
        for p in api.get(reverse("api_assignment", args=[assignment.pk])).json()["content"][side]
        if p["kind"] == "video"
    )
    assert video["poster_url"] == f"{video['url']}poster/" and video["strip_url"] is None
    poster = api.get(video["poster_url"])
    assert poster.status_code == 200 and poster["Content-Type"] == "image/webp"
    assert body(poster) == b"RIFF0000WEBPVP8 poster"
    assert stranger.get(video["poster_url"]).status_code == 404
