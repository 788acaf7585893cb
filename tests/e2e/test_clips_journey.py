"""Issue 35's Done-when journey: video pairs and audio pairs judged by
keyboard alone. One transport drives both responses: after a play/pause, a
seek, a frame step and a speed change both players' `currentTime` agree
within one frame; `t` flickers videos in one place at the same position and
switches which audio take sounds without moving the position; the stored
votes are canonical whatever side a response was shown on; axe-core passes
at desktop and phone sizes."""

import itertools
import json
import time

import pytest

from annotate.importing.service import import_items_from_paths
from annotate.models import Assignment, Judgement, Membership
from demo.clips import audio_bytes, video_bytes
from tests.e2e.compare_helpers import log_in, start
from tests.e2e.test_accessibility import AXE_OPTIONS
from tests.factories import make_project, make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

FPS = 25
TIMES = "() => window.studioClips.times()"
READY = """() => [...document.querySelectorAll('.responses.clips .clip')]
    .every(m => m.readyState >= 2)"""


class Alternating:
    """The display coin: not swapped, swapped, … in claim order."""

    def __init__(self):
        self.values = itertools.cycle([0.9, 0.1])

    def random(self):
        return next(self.values)


def clip_project(tmp_path, slug: str, kind: str):
    root = tmp_path / slug
    (root / "clips").mkdir(parents=True)
    make = video_bytes if kind == "video" else audio_bytes
    suffix = "mp4" if kind == "video" else "wav"
    lines = []
    faults = (
        [{"stutter": True}, {"wrong_colour": True}]
        if kind == "video"
        else [{"dropped_beat": 2}, {"gain_db": -12}]
    )
    for n, fault in enumerate(faults):
        good, bad = f"clips/{n}-good.{suffix}", f"clips/{n}-bad.{suffix}"
        args = {"seconds": 2} if kind == "video" else {"seconds": 3}
        (root / good).write_bytes(
            make(
                **args,
                **({"colour": (40, 110 + n * 40, 200)} if kind == "video" else {"bpm": 120 + n}),
            )
        )
        (root / bad).write_bytes(
            make(
                **args,
                **fault,
                **({"colour": (40, 110 + n * 40, 200)} if kind == "video" else {"bpm": 120 + n}),
            )
        )
        lines.append(
            {
                "id": f"{kind}-{n}",
                "domain": "Clips",
                "prompt": [{"text": f"Which {kind} plays right?"}],
                "responses": [[{kind: good}], [{kind: bad}]],
                "models": ["secret-model-good", "secret-model-bad"],
            }
        )
    (root / "data.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    project = make_project(slug=slug, votes_per_item=1)
    assert import_items_from_paths(project=project, dataset=root / "data.jsonl").created == 2
    return project


def assert_in_sync(page, what: str) -> list[float]:
    times = page.evaluate(TIMES)
    assert len(times) >= 2, times
    assert max(times) - min(times) <= 1 / FPS, (what, times)
    return times


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)])
def test_video_and_audio_pairs_are_judged_by_keyboard_in_sync(
    live_server, browser, tmp_path, artifacts, monkeypatch, size
):
    from axe_playwright_python.sync_playwright import Axe

    monkeypatch.setattr("annotate.loop.service._coin", Alternating())
    user = make_user("ann")
    for slug, kind in (("vid", "video"), ("aud", "audio")):
        project = clip_project(tmp_path, slug, kind)
        Membership.objects.create(project=project, user=user, role="annotator")
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    tag = f"{size[0]}x{size[1]}"
    axe = Axe()
    pressed: dict[int, str] = {}
    log_in(page, live_server.url, "ann", "/")
    for slug, kind in (("vid", "video"), ("aud", "audio")):
        start(page, live_server.url, slug)
        keys = iter(["1", "2"])
        first = True
        while "/work/done/" not in page.url:
            page.wait_for_selector("#clip-tools")
            page.wait_for_function(READY)
            work = page.locator("#work")
            assert work.get_attribute("data-layout") == "clips"
            assert "secret-model" not in page.content()
            assert "clips/" not in page.content()  # no source path names a side
            if first:
                page.keyboard.press("?")
                panel = page.locator("#keys").inner_text()
                assert "Play / pause both responses together" in panel and "One frame back" in panel
                page.keyboard.press("Escape")
                results = axe.run(page, options=AXE_OPTIONS)
                assert not results.violations_count, results.generate_report()
                # Play, then pause: both at the same moment.
                page.keyboard.press(" ")
                page.wait_for_function("() => window.studioClips.times()[0] > 0.3")
                page.keyboard.press(" ")
                time.sleep(0.2)
                before = assert_in_sync(page, "play/pause")
                # Frame steps forward and back, one frame each.
                page.keyboard.press(".")
                page.wait_for_function(
                    "t => Math.abs(window.studioClips.times()[0] - t) > 0.001", arg=before[0]
                )
                stepped = assert_in_sync(page, "frame step")
                frame = 1 / FPS if kind == "video" else 0.01
                # To the middle of the next frame: over half a frame on, at most 1.5 frames.
                assert 0 < stepped[0] - before[0] <= 1.5 * frame + 1e-3, (before, stepped)
                # A seek by the position bar moves both.
                page.focus("#clip-seek")
                page.keyboard.press("End")
                page.keyboard.press("Escape")
                time.sleep(0.3)
                assert_in_sync(page, "seek")
                page.keyboard.press(",")
                time.sleep(0.2)
                assert_in_sync(page, "frame back")
                # Speed.
                page.keyboard.press("[")
                assert page.locator("#clip-speed").inner_text() == "0.75\u00d7"
                page.keyboard.press("]")
                # t: flicker in one place, or the other take at the same position.
                at = page.evaluate(TIMES)[0]
                page.keyboard.press("t")
                time.sleep(0.3)
                if kind == "video":
                    assert page.locator("#clip-flicker").is_visible()
                    assert page.locator("#clip-flicker-side").inner_text() == "Response A"
                    page.keyboard.press("t")
                    assert page.locator("#clip-flicker-side").inner_text() == "Response B"
                    flick = assert_in_sync(page, "flicker")
                    assert abs(flick[0] - at) <= 1 / FPS
                    page.screenshot(path=str(artifacts / f"clips-video-flicker-{tag}.png"))
                    page.keyboard.press("Escape")
                    assert not page.locator("#clip-flicker").is_visible()
                else:
                    assert "listening to B" in page.locator("#clip-state").inner_text()
                    muted = page.evaluate(
                        "[...document.querySelectorAll('.responses audio.clip')].map(a => a.muted)"
                    )
                    assert muted == [True, False]
                    assert abs(page.evaluate(TIMES)[0] - at) < 0.001
                    page.keyboard.press("t")
                page.screenshot(
                    path=str(artifacts / f"clips-{kind}-pair-{tag}.png"), full_page=True
                )
                first = False
            key = next(keys)
            page.keyboard.press(key)
            assignment = int(work.get_attribute("data-assignment"))
            pressed[assignment] = key
            url = page.url
            page.keyboard.press("Enter")
            page.wait_for_function("u => location.href !== u", arg=url)
        results = axe.run(page, options=AXE_OPTIONS)
        assert not results.violations_count, results.generate_report()
    swaps = set()
    for assignment_id, key in pressed.items():
        a = Assignment.objects.get(pk=assignment_id)
        j = Judgement.objects.get(assignment=a)
        shown_left = key == "1"
        # Canonical: response 1 is the left one unless the pair was shown swapped.
        assert j.choice == ("1" if shown_left != a.shown_swapped else "2"), (key, a.shown_swapped)
        swaps.add(a.shown_swapped)
    assert swaps == {True, False} and len(pressed) == 4
    assert not errors, errors
