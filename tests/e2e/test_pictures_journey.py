"""Issue 24, item 2 and its Done-when journey: text-to-image, edit and
interleaved pairs judged by keyboard alone on a graded scale (graded6).
Pictures zoom and pan together (keys, wheel, drag), an edit's input image
sits beside both results at one scale, flicker shows A and B in turn in one
place and names only the displayed side, the stored votes are canonical
whatever side a response was shown on, and axe-core passes at both sizes."""

import itertools
import re

import pytest

from annotate.importing.formats.mmrb2 import import_mmrb2_from_paths
from annotate.loop import scales
from annotate.models import Assignment, Judgement, Membership
from tests.annotate.importing.test_mmrb2 import published_fixture
from tests.e2e.compare_helpers import log_in, start
from tests.e2e.test_accessibility import AXE_OPTIONS
from tests.factories import make_project, make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SECRETS = ("imagen4", "gpt-image-1", "flux", "GPTGeminiAgent", "chameleon", "model-a", "emu_edit")
# The pictures in view (the flicker pane not shown is left out), with their transform.
SHOWN = """() => [...document.querySelectorAll('#work .pic img')]
    .filter(i => i.offsetParent !== null).map(i => i.style.transform)"""


def draw_pictures(root) -> None:
    """The fixture's pictures redrawn as scenes one can look at in the
    screenshots: a house under a sky (an edit's input, its results with or
    without snow), apples, cats as circles; each file its own."""
    import hashlib

    from PIL import Image, ImageDraw

    for path in sorted(root.rglob("*.jpg")):
        seed = int(hashlib.sha256(path.name.encode()).hexdigest()[:8], 16)
        img = Image.new("RGB", (384, 384), (120 + seed % 60, 170, 220))
        d = ImageDraw.Draw(img)
        d.rectangle([0, 270, 384, 384], fill=(70, 140 - seed % 40, 60))
        d.rectangle([120, 170, 264, 290], fill=(190, 120, 80), outline=(60, 40, 30), width=3)
        d.polygon([(105, 175), (192, 100), (279, 175)], fill=(150, 40, 40))
        d.rectangle([175, 230, 210, 290], fill=(80, 50, 30))
        d.ellipse([300, 30, 350, 80], fill=(250, 220, 80))
        for n in range(1 + seed % 4):  # a count of apples that differs by picture
            d.ellipse([30 + 40 * n, 300, 62 + 40 * n, 332], fill=(210, 30, 30))
        if path.name.endswith("_1.jpg") and "emu_edit" in path.name:  # the edit done: snow
            for n in range(140):
                x, y = (n * 97 + seed) % 384, (n * 61) % 384
                d.ellipse([x, y, x + 5, y + 5], fill=(255, 255, 255))
        img.save(path, "JPEG", quality=90)


class Alternating:
    """The display coin: not swapped, swapped, not swapped… in claim order."""

    def __init__(self):
        self.values = itertools.cycle([0.9, 0.1])

    def random(self):
        return next(self.values)


def same_everywhere(page, at_least: int = 2) -> str:
    shown = page.evaluate(SHOWN)
    assert len(shown) >= at_least and len(set(shown)) == 1, shown
    return shown[0]


def scale_of(transform: str) -> float:
    m = re.search(r"scale\(([\d.]+)\)", transform)
    return float(m.group(1)) if m else 1.0


def check_zoom_and_pan(page, layout: str) -> None:
    page.keyboard.press("+")
    assert scale_of(same_everywhere(page)) == 1.25
    assert page.locator("#zoom-level").inner_text() == "125%"
    before = same_everywhere(page)
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("Shift+ArrowDown")
    moved = same_everywhere(page)
    assert moved != before and scale_of(moved) == 1.25
    page.keyboard.press("-")
    page.keyboard.press(".")
    assert same_everywhere(page) == ""
    if layout == "parts":
        return
    # The wheel over response A zooms B (and an edit's input) the same way;
    # a drag on B pans A.
    page.locator('.response[data-side="left"] .pic').first.scroll_into_view_if_needed()
    left = page.locator('.response[data-side="left"] .pic').first.bounding_box()
    page.mouse.move(left["x"] + left["width"] * 0.3, left["y"] + left["height"] * 0.3)
    page.mouse.wheel(0, -200)
    page.wait_for_function("() => (document.getElementById('zoom-level').textContent) !== '100%'")
    zoomed = same_everywhere(page)
    assert scale_of(zoomed) > 1
    page.locator('.response[data-side="right"] .pic').first.scroll_into_view_if_needed()
    right = page.locator('.response[data-side="right"] .pic').first.bounding_box()
    page.mouse.move(right["x"] + right["width"] / 2, right["y"] + right["height"] / 2)
    page.mouse.down()
    page.mouse.move(right["x"] + right["width"] / 2 + 15, right["y"] + right["height"] / 2 + 10)
    page.mouse.up()
    assert same_everywhere(page) != zoomed
    page.keyboard.press(".")
    assert same_everywhere(page) == ""


def check_flicker(page, artifacts, name: str) -> None:
    left_src = page.locator('.response[data-side="left"] img.part-img').first.get_attribute("src")
    right_src = page.locator('.response[data-side="right"] img.part-img').first.get_attribute("src")
    assert page.locator("#flicker").is_hidden()
    page.keyboard.press("t")
    assert page.locator("#flicker").is_visible()
    assert page.locator("[data-action=flicker]").get_attribute("aria-pressed") == "true"
    assert page.locator("#flicker-side").inner_text() == "Showing Response A"
    shown = page.locator("#flicker .flicker-pane:visible img")
    assert shown.first.get_attribute("src") == left_src
    assert shown.first.get_attribute("alt").startswith("Response A")
    # The response cards hide their pictures: one place shows them.
    assert page.locator(".response .parts").first.is_hidden()
    page.keyboard.press("+")  # zooming works in flicker too
    assert scale_of(same_everywhere(page, at_least=1)) == 1.25
    frame = page.locator("#flicker").bounding_box()
    page.keyboard.press("t")
    after = page.locator("#flicker").bounding_box()
    # Switching moves nothing below (the caption's width may differ by a hair).
    assert (after["y"], after["height"]) == (frame["y"], frame["height"])
    assert abs(after["x"] - frame["x"]) < 1
    assert page.locator("#flicker-side").inner_text() == "Showing Response B"
    shown = page.locator("#flicker .flicker-pane:visible img")
    assert shown.first.get_attribute("src") == right_src
    assert scale_of(same_everywhere(page, at_least=1)) == 1.25  # the view stays while switching
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page, options=AXE_OPTIONS)
    assert not results.violations_count, results.generate_report()
    page.screenshot(path=str(artifacts / f"{name}-flicker.png"), full_page=True)
    text = page.locator("#flicker").inner_text()
    for secret in SECRETS:
        assert secret not in text
    page.keyboard.press("Escape")
    assert page.locator("#flicker").is_hidden()
    assert page.locator("[data-action=flicker]").get_attribute("aria-pressed") == "false"
    assert page.locator(".response .parts").first.is_visible()
    page.keyboard.press(".")


def check_edit_layout(page, wide: bool) -> None:
    """The input image beside both results (stacked on a phone), all three at one scale."""
    card = page.locator(".input-card")
    assert card.count() == 1 and card.locator("img.part-img").count() == 1
    # The prompt keeps its text, without the image.
    assert page.locator(".stage .prompt img").count() == 0
    assert "Make it snow" in page.locator(".stage .prompt").inner_text()
    boxes = [
        page.locator(sel).bounding_box()
        for sel in (".input-card", '.response[data-side="left"]', '.response[data-side="right"]')
    ]
    if wide:
        assert abs(boxes[0]["y"] - boxes[1]["y"]) < 2 and abs(boxes[1]["y"] - boxes[2]["y"]) < 2
        assert boxes[0]["x"] < boxes[1]["x"] < boxes[2]["x"]
    else:
        assert boxes[0]["y"] < boxes[1]["y"] < boxes[2]["y"]
    scales_ = page.evaluate(
        """() => [...document.querySelectorAll('.responses.pictures .pic img')]
            .map(i => i.getBoundingClientRect().width / i.naturalWidth)"""
    )
    assert len(scales_) == 3 and max(scales_) - min(scales_) < 0.02 * max(scales_), scales_


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)])
def test_picture_pairs_are_judged_by_keyboard_on_a_graded_scale(
    live_server, browser, tmp_path, artifacts, monkeypatch, size
):
    from axe_playwright_python.sync_playwright import Axe

    monkeypatch.setattr("annotate.loop.service._coin", Alternating())
    published_fixture(tmp_path)
    draw_pictures(tmp_path)
    project = make_project(slug="p24", votes_per_item=1, preference_scale="graded6")
    for task in ("t2i", "edit", "interleaved"):
        import_mmrb2_from_paths(project=project, dataset=tmp_path / f"{task}.json")
    Membership.objects.create(project=project, user=make_user("ann"), role="annotator")
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    log_in(page, live_server.url, "ann", "/p/p24/")
    start(page, live_server.url, "p24")
    axe = Axe()
    wide = size[0] > 820
    tag = f"{size[0]}x{size[1]}"
    # One graded key per item, in displayed terms (1: A much better … 6: B much better).
    keys = iter(["2", "5", "1", "6"])
    pressed: dict[int, str] = {}
    layouts = []
    while "/work/done/" not in page.url:
        page.wait_for_selector("#work .parts")
        page.wait_for_function(
            "() => [...document.querySelectorAll('img.part-img')]"
            ".every(i => i.complete && i.naturalWidth > 0)"
        )
        work = page.locator("#work")
        layout = work.get_attribute("data-layout")
        assignment = int(work.get_attribute("data-assignment"))
        domain = Assignment.objects.get(pk=assignment).item.domain.slug
        layouts.append((domain, layout))
        text = work.inner_text()
        for secret in SECRETS:
            assert secret not in text
        # The `?` panel lists the picture keys this item acts on.
        page.keyboard.press("?")
        panel = page.locator("#keys").inner_text()
        assert "Zoom in / out / fit" in panel and "Shift+←" in panel
        assert ("Flicker" in panel) == (layout in ("pictures", "edit"))
        assert "Image at full size" not in panel
        page.keyboard.press("Escape")
        results = axe.run(page, options=AXE_OPTIONS)
        assert not results.violations_count, results.generate_report()
        name = {"mmrb2-t2i": "t2i", "mmrb2-edit": "edit"}.get(domain, "interleaved")
        page.screenshot(path=str(artifacts / f"pictures-{name}-{tag}.png"), full_page=True)
        if layout == "edit":
            check_edit_layout(page, wide)
        check_zoom_and_pan(page, layout)
        if layout in ("pictures", "edit"):
            check_flicker(page, artifacts, f"pictures-{name}-{tag}")
        key = next(keys)
        page.keyboard.press(key)
        assert page.locator(f"#strength-{key}").is_checked()
        pressed[assignment] = key
        url = page.url
        page.keyboard.press("Enter")
        page.wait_for_function("u => location.href !== u", arg=url)

    assert sorted(layouts) == [
        ("mmrb2-edit", "edit"),
        ("mmrb2-interleaved", "parts"),
        ("mmrb2-t2i", "pictures"),
        ("mmrb2-t2i", "pictures"),
    ]
    swaps = set()
    for assignment_id, key in pressed.items():
        a = Assignment.objects.get(pk=assignment_id)
        j = Judgement.objects.get(assignment=a)
        shown = scales.POINTS["graded6"][int(key) - 1]  # oriented to the left response
        # Canonical: oriented to response 1, whatever side it was shown on.
        assert j.strength == (-shown if a.shown_swapped else shown), (key, a.shown_swapped)
        assert j.choice == scales.choice_of(j.strength)
        swaps.add(a.shown_swapped)
    assert swaps == {True, False}
    assert not errors, errors


def test_picture_zoom_honours_reduced_motion(live_server, browser, tmp_path):
    published_fixture(tmp_path)
    project = make_project(slug="p24", votes_per_item=1, preference_scale="graded6")
    import_mmrb2_from_paths(project=project, dataset=tmp_path / "edit.json")
    Membership.objects.create(project=project, user=make_user("ann"), role="annotator")
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    log_in(page, live_server.url, "ann", "/p/p24/")
    start(page, live_server.url, "p24")
    duration = "() => getComputedStyle(document.querySelector('.pic img')).transitionDuration"
    assert page.evaluate(duration) == "0.09s"
    page.emulate_media(reduced_motion="reduce")
    assert page.evaluate(duration) == "0s"
    # The zoom still works, at once.
    page.keyboard.press("+")
    assert scale_of(same_everywhere(page)) == 1.25
