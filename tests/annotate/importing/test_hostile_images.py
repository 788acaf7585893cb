"""Hostile "images" at import: files that are really HTML, SVG with script,
polyglots, decompression bombs and broken pictures.

Anything Pillow does not fully decode as an allowed format is refused, naming
the record and image, with nothing written. A polyglot that *is* a valid image
(a GIF whose comment is JavaScript, a PNG or JPEG carrying HTML) is accepted as
the picture it is, stored under the extension of the format Pillow found, and
only ever served as that image type, with nosniff and a sandbox policy. The
basic cases (HTML named .png, PNG bombs and pixel limits, truncated PNG/JPEG,
empty files, byte limit) are in test_import.py; this file adds the others.
"""

from __future__ import annotations

import io
import json
import random
import re
import struct
import zipfile
from pathlib import Path

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from PIL import Image, PngImagePlugin

from annotate.importing.images import check_image, pillow_limits
from annotate.importing.records import ImageLimits, ImportFailed
from annotate.importing.service import import_items_from_paths
from annotate.importing.sources import ImageSource
from annotate.models import ImageAsset, Item
from tests.factories import make_member, make_project, make_user, png_bytes

pytestmark = pytest.mark.django_db

SCRIPT = b"<script>alert(document.cookie)</script>"
HTML_PAGE = b"<!DOCTYPE html><html><body>" + SCRIPT + b"</body></html>"
SVG = (
    b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">'
    + SCRIPT
    + b'<rect width="10" height="10"/></svg>'
)


def encoded(fmt: str, size=(40, 30), **params) -> bytes:
    image = Image.new("RGB", size, (200, 40, 40))
    if fmt == "GIF":
        image = image.convert("P")
    out = io.BytesIO()
    image.save(out, format=fmt, **params)
    return out.getvalue()


def png_with_html_chunk() -> bytes:
    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", HTML_PAGE.decode())
    return encoded("PNG", pnginfo=info)


def gif_javascript_polyglot() -> bytes:
    """GIF89a + a width of 0x2A2F, whose bytes read '/*': the header opens a
    JavaScript comment that the GIF comment block closes before the payload."""
    data = encoded("GIF", size=(0x2A2F, 2), comment=b"*/=1;alert(document.domain);/*")
    assert data[6:8] == b"/*"
    return data


def with_declared_size(data: bytes, fmt: str, width: int, height: int) -> bytes:
    """A small file whose header declares other dimensions."""
    if fmt == "GIF":  # logical screen and the first image descriptor
        out = bytearray(data)
        out[6:10] = struct.pack("<HH", width, height)
        descriptor = out.index(b"\x2c", 13)
        out[descriptor + 5 : descriptor + 9] = struct.pack("<HH", width, height)
        return bytes(out)
    if fmt == "JPEG":  # the SOF0 segment
        sof = data.index(b"\xff\xc0")
        return data[: sof + 5] + struct.pack(">HH", height, width) + data[sof + 9 :]
    raise ValueError(fmt)


def eps_file() -> bytes:
    return b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 10 10\n%%EndComments\nshowpage\n"


def write_dataset(tmp_path: Path, image_name: str) -> Path:
    record = {
        "ID": "vqa_1",
        "Text": "What is shown?",
        "Image": image_name,
        "Output1": "A red square.",
        "Output2": "A blue circle.",
        "Better": "Output1",
        "Category": "vqa",
    }
    dataset = tmp_path / "data.json"
    dataset.write_text("[\n" + json.dumps(record) + "\n]\n")
    return dataset


def import_one(tmp_path: Path, image: bytes, name: str = "images/picture.png"):
    """Import one MRB record using `image` as `name`; the result or the failure."""
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_bytes(image)
    dataset = write_dataset(tmp_path, name)
    try:
        return import_items_from_paths(project=make_project(), dataset=dataset, images=tmp_path)
    except ImportFailed as failure:
        return failure


def stored_files() -> list[Path]:
    root = Path(default_storage.location)
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def refusal(tmp_path: Path, image: bytes, name: str = "images/picture.png") -> str:
    outcome = import_one(tmp_path, image, name)
    assert isinstance(outcome, ImportFailed), "the hostile image was accepted"
    assert (Item.objects.count(), ImageAsset.objects.count(), stored_files()) == (0, 0, [])
    [problem] = outcome.problems
    prefix = f"data.json:2: record 0: field 'Image': image '{name}': "
    assert str(problem).startswith(prefix), str(problem)
    return str(problem).removeprefix(prefix)


# --- Refused at import ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("images/drawing.svg", SVG),
        ("images/drawing.png", SVG),  # SVG under an image name
        ("images/page.jpg", HTML_PAGE),
        ("images/page.gif", b"GIF89a" + HTML_PAGE),  # an image signature, then HTML
        ("images/page.png", b"\x89PNG\r\n\x1a\n" + HTML_PAGE),
        ("images/script.webp", b"RIFF\x20\x00\x00\x00WEBP" + SCRIPT),
        ("images/script.png", b"/*" + b"\x00" * 20 + b"*/alert(1)"),
    ],
)
def test_markup_and_script_dressed_as_images_are_refused(tmp_path, name, data):
    reason = refusal(tmp_path, data, name)
    assert reason == "not an image Pillow can read" or reason.startswith(
        "image data is corrupt or truncated ("
    ), reason


@pytest.mark.parametrize(
    "data",
    [
        b"\x89PNG\r\n\x1a\n" + HTML_PAGE,  # Pillow: "Truncated File Read"
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00",  # "Truncated IHDR chunk"
        encoded("WEBP")[:40],  # "could not create decoder object"
    ],
)
def test_broken_header_after_a_known_signature_says_the_image_is_corrupt(tmp_path, data):
    """Pillow's bare words for these ("Truncated File Read") were the whole message."""
    assert refusal(tmp_path, data).startswith("image data is corrupt or truncated (")


def test_postscript_is_refused_by_format_before_anything_decodes_it(tmp_path):
    """Pillow would hand EPS to Ghostscript to decode; the format check comes first."""
    assert refusal(tmp_path, eps_file(), "images/figure.png") == (
        "format EPS is not allowed (allowed: PNG, JPEG, WEBP, GIF)"
    )


@pytest.mark.parametrize("fmt", ["GIF", "JPEG"])
def test_small_file_declaring_huge_dimensions_is_refused_as_a_bomb(tmp_path, fmt):
    bomb = with_declared_size(encoded(fmt, size=(8, 8)), fmt, 65_000, 65_000)
    assert len(bomb) < 2_000
    reason = refusal(tmp_path, bomb)
    assert reason == "refused as a decompression bomb (more than 40000000 pixels)"


@pytest.mark.parametrize("fmt", ["GIF", "JPEG", "WEBP"])
def test_pixel_count_over_the_limit_is_refused_for_every_format(tmp_path, settings, fmt):
    settings.IMAGE_MAX_PIXELS = 1_000  # 40x30 = 1200: over the limit, under twice it
    assert refusal(tmp_path, encoded(fmt)) == ("40x30 is 1200 pixels, more than the limit of 1000")


@pytest.mark.parametrize("fmt", ["GIF", "WEBP"])
def test_truncated_gif_and_webp_are_refused(tmp_path, fmt):
    noisy = Image.effect_noise((64, 64), 80).convert("RGB")
    out = io.BytesIO()
    noisy.save(out, format=fmt)
    data = out.getvalue()
    reason = refusal(tmp_path, data[: len(data) * 2 // 3])
    assert reason.startswith("image data is corrupt or truncated ("), reason


def test_image_over_the_byte_limit_in_a_zip_is_refused_before_it_is_read(tmp_path, settings):
    settings.IMAGE_MAX_BYTES = 1_000
    archive = tmp_path / "images.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("images/picture.png", png_bytes(size=(300, 300)) + b"\x00" * 2_000)
    dataset = write_dataset(tmp_path, "images/picture.png")
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=make_project(), dataset=dataset, images=archive)
    assert "more than the limit of 1000" in str(failure.value)
    assert Item.objects.count() == 0


# --- Valid images carrying a payload: accepted, served only as images -----------------


POLYGLOTS = {
    "gif_js": ("GIF", "image/gif", gif_javascript_polyglot),
    "png_html_chunk": ("PNG", "image/png", png_with_html_chunk),
    "png_html_after_end": ("PNG", "image/png", lambda: encoded("PNG") + HTML_PAGE),
    "jpeg_html_comment": ("JPEG", "image/jpeg", lambda: encoded("JPEG", comment=HTML_PAGE)),
}


@pytest.mark.parametrize("kind", list(POLYGLOTS))
def test_valid_image_with_a_payload_is_served_only_as_its_image_type(client, tmp_path, kind):
    fmt, content_type, make = POLYGLOTS[kind]
    payload = make()
    # Named .html: the stored name and the served type follow the format
    # Pillow found, never the source name.
    outcome = import_one(tmp_path, payload, "images/page.html")
    assert not isinstance(outcome, ImportFailed), outcome
    asset = ImageAsset.objects.get()
    assert asset.format == fmt
    assert asset.file.endswith("." + {"JPEG": "jpg"}.get(fmt, fmt.lower()))
    item = Item.objects.get()
    client.force_login(make_user())
    # Only members of a project that uses the image may fetch it.
    assert client.get(reverse("media", args=[asset.file])).status_code == 404
    client.force_login(make_member(item.project, role="annotator"))
    response = client.get(reverse("media", args=[asset.file]))
    assert response.status_code == 200
    assert response["Content-Type"] == content_type
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in response["Content-Security-Policy"]
    assert "default-src 'none'" in response["Content-Security-Policy"]
    assert "attachment" not in response.get("Content-Disposition", "")
    body = b"".join(response.streaming_content)
    assert body == payload  # stored byte for byte: the payload is inert, not stripped
    # The annotator's page shows it as an <img>, never as a frame or object.
    annotator = make_member(item.project, role="annotator")
    client.force_login(annotator)
    start = client.post(reverse("work_start", args=[item.project.slug]))
    page = client.get(start["Location"]).content.decode()
    media_url = reverse("media", args=[asset.file])
    assert f'src="{media_url}"' in page
    assert "<iframe" not in page and "<object" not in page and "<embed" not in page


# --- Through the upload page ----------------------------------------------------------


@pytest.mark.parametrize(
    ("member", "data"),
    [
        ("images/red.png", SVG),
        ("images/red.png", HTML_PAGE),
        (
            "images/red.png",
            with_declared_size(encoded("JPEG", size=(8, 8)), "JPEG", 60_000, 60_000),
        ),
        ("images/red.png", b""),
    ],
    ids=["svg", "html", "jpeg-bomb", "empty"],
)
def test_upload_page_refuses_a_bundle_with_a_hostile_image(client, member, data):
    project = make_project()
    client.force_login(make_member(project, role="admin"))
    record = {
        "ID": "vqa_1",
        "Text": "What is shown?",
        "Image": member,
        "Output1": "A",
        "Output2": "B",
        "Better": "Output1",
        "Category": "vqa",
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zipped:
        zipped.writestr("bundle/data.json", "[\n" + json.dumps(record) + "\n]\n")
        zipped.writestr(f"bundle/{member}", data)
    response = client.post(
        reverse("import", args=[project.slug]),
        {"dataset": SimpleUploadedFile("bundle.zip", out.getvalue())},
    )
    assert response.status_code == 400
    [problem] = response.context["problems"]
    assert problem.startswith(
        "bundle.zip:bundle/data.json:2: record 0: field 'Image': image 'images/red.png': "
    )
    assert (Item.objects.count(), ImageAsset.objects.count(), stored_files()) == (0, 0, [])


# --- Generated broken images ----------------------------------------------------------


def noisy(fmt: str, **params) -> bytes:
    # Seeded noise (Image.effect_noise is not), so derandomize=True replays the same cases.
    image = Image.frombytes("RGB", (24, 16), random.Random(fmt).randbytes(24 * 16 * 3))
    out = io.BytesIO()
    (image.convert("P") if fmt == "GIF" else image).save(out, format=fmt, **params)
    return out.getvalue()


class BytesSource(ImageSource):
    def __init__(self, data: bytes):
        self.data = data

    def read(self, ref: str, max_bytes: int) -> bytes:
        return self.data


SEEDS = [noisy("PNG"), noisy("JPEG"), noisy("JPEG", progressive=True), noisy("GIF"), noisy("WEBP")]
EDITS = st.lists(
    st.tuples(
        st.integers(0, 10**6), st.integers(0, 255), st.sampled_from(["set", "del", "ins", "cut"])
    ),
    max_size=4,
)
KNOWN_REASONS = (
    "not an image Pillow can read",
    "image data is corrupt or truncated (",
    "file is empty",
    "refused as a decompression bomb",
    "format ",
    "image has no pixels",
)
# Between 1x and 2x the pixel limit Pillow only warns; the check then names the size.
OVER_PIXEL_LIMIT = re.compile(r"^\d+x\d+ is \d+ pixels, more than the limit of \d+$")


@hsettings(derandomize=True, database=None, deadline=None, max_examples=400)
@given(seed=st.sampled_from(SEEDS), edits=EDITS)
def test_damaged_images_are_accepted_whole_or_refused_with_a_reason(seed, edits):
    """Bytes set, dropped, inserted or cut anywhere in a valid image: the check
    returns the image's facts or a readable reason, never raises."""
    data = bytearray(seed)
    for position, value, edit in edits:
        if not data:
            break
        at = position % len(data)
        if edit == "set":
            data[at] = value
        elif edit == "del":
            del data[at]
        elif edit == "ins":
            data.insert(at, value)
        else:
            data = data[:at]
    limits = ImageLimits()
    with pillow_limits(limits):
        outcome = check_image(BytesSource(bytes(data)), limits, "images/x.png")
    if isinstance(outcome, str):
        assert outcome.startswith(KNOWN_REASONS) or OVER_PIXEL_LIMIT.match(outcome), outcome
    else:
        assert outcome.format in limits.allowed_formats
        assert outcome.width * outcome.height <= limits.max_pixels
