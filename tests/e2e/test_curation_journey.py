"""A curator resolves three contested items in real Chromium with the keyboard
only, skipping one item they voted on themselves (conflict of interest)."""

import json
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from annotate.importing.service import import_items_from_paths
from annotate.loop.service import Vote, claim_next_item, submit_judgement
from annotate.models import Membership
from curation.models import AuditEvent, Verdict, VerdictStatus
from tests.factories import make_project, make_user, png_bytes

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SLUG = "cur-e2e"
N_ITEMS = 5
MATH = "Area: $\\pi r^2$ and\n\n$$\\int_0^1 x^2\\,dx = \\tfrac13$$"
CODE = "```python\ndef area(r):\n    return 3.14159 * r ** 2\n```"
# (key pressed, reason typed). The reasons hold "n", "b", "x" and digits: while
# the reason box has focus they must be typed, not taken as shortcuts.
PLAN = [
    ("1", "Response 1 names the blue background; 2 misreads it."),
    ("2", "Both okay, but 2 gives the formula and a runnable example."),
    ("1", "Tie votes are lazy here: 1 answers the question, 2 does not."),
]


def make_dataset(tmp_path, n=N_ITEMS):
    (tmp_path / "img").mkdir(exist_ok=True)
    records = []
    for i in range(n):
        name = f"img/{i}.png"
        (tmp_path / name).write_bytes(png_bytes(size=(320, 200), color=(40 * i, 90, 170)))
        records.append(
            {
                "ID": f"contest_{i}",
                "Text": f"**Question {i}:** which colour dominates the image?",
                "Image": name,
                "Output1": f"RESPONSE-ONE-{i}: mostly blue. {MATH}",
                "Output2": f"RESPONSE-TWO-{i}: mostly teal.\n\n{CODE}\n\n- a list item",
                "Better": "Output1",
                "Category": "open_generation/preference_task",
            }
        )
    path = tmp_path / "data.json"
    path.write_text(json.dumps(records))
    return path


def vote_all(project, user, choice_for, limit=None):
    """Let `user` claim and judge items until none are left (or `limit`)."""
    voted = []
    while limit is None or len(voted) < limit:
        a = claim_next_item(project=project, annotator=user)
        if a is None:
            break
        choice = choice_for(a.item_id)
        submit_judgement(
            assignment_id=a.pk,
            annotator=user,
            vote=Vote(choice=choice, rationale=f"{user.username} says {choice}"),
        )
        voted.append(a.item_id)
    return voted


def make_contested_project(tmp_path):
    """Five contested items; the curator cast one of the votes on one of them."""
    project = make_project(slug=SLUG, name="Curation journey", votes_per_item=3)
    result = import_items_from_paths(
        project=project, dataset=make_dataset(tmp_path), images=tmp_path
    )
    item_ids = sorted(project.items.values_list("pk", flat=True))
    assert len(item_ids) == N_ITEMS, result
    annotators = []
    for n in range(1, 4):
        user = make_user(f"ann{n}")
        Membership.objects.create(project=project, user=user, role="annotator", pseudonym=f"A{n}")
        annotators.append(user)
    curator = make_user("curator")
    Membership.objects.create(project=project, user=curator, role="curator", pseudonym="Cu")

    # First voter always says 1, the second 2 (or tie on even items), the third tie:
    # no choice reaches the agreement share, so every item is contested.
    vote_all(project, annotators[0], lambda _: "1")
    vote_all(project, annotators[1], lambda pk: "tie" if item_ids.index(pk) % 2 == 0 else "2")
    third = vote_all(project, annotators[2], lambda _: "tie", limit=N_ITEMS - 1)
    (conflict_id,) = vote_all(project, curator, lambda _: "tie")
    assert conflict_id not in third
    verdicts = Verdict.objects.filter(project=project)
    assert sorted(verdicts.values_list("status", flat=True)) == [VerdictStatus.CONTESTED] * N_ITEMS

    # The queue (and "next contested") go oldest first: put the conflict item
    # second so the curator meets it in the middle of the journey.
    others = [pk for pk in item_ids if pk != conflict_id]
    order = [others[0], conflict_id, *others[1:]]
    start = timezone.now() - timedelta(hours=1)
    for k, pk in enumerate(order):
        Verdict.objects.filter(item_id=pk).update(updated_at=start + timedelta(minutes=k))
    return project, curator, order, conflict_id


def item_id_of(url: str) -> int:
    match = re.search(rf"/p/{SLUG}/curation/(\d+)/$", url)
    assert match, url
    return int(match.group(1))


def test_curator_resolves_three_contested_items_with_the_keyboard(
    live_server, browser, artifacts, tmp_path
):
    project, curator, order, conflict_id = make_contested_project(tmp_path)
    adjudicate_url = re.compile(rf"/p/{SLUG}/curation/\d+/$")

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/accounts/login/?next=/p/{SLUG}/curation/")
    page.wait_for_selector("input[name=username]:focus")  # autofocus
    page.keyboard.type("curator")
    page.keyboard.press("Tab")
    page.keyboard.type("pw")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/p/{SLUG}/curation/")
    page.wait_for_selector("#queue")
    assert page.locator("#queue tbody tr").count() == N_ITEMS

    # Tab through the header, tabs and filters to the first queue row's link.
    first_link = "#queue tbody tr:first-child td:first-child a"
    for _ in range(60):
        page.keyboard.press("Tab")
        if page.evaluate("s => document.activeElement === document.querySelector(s)", first_link):
            break
    else:
        pytest.fail("Tab never reached the first queue link")
    page.keyboard.press("Enter")
    page.wait_for_url(adjudicate_url)
    assert item_id_of(page.url) == order[0]

    resolved: list[tuple[int, str, str]] = []
    conflicts_met = 0
    screenshot_taken = False
    while len(resolved) < len(PLAN):
        page.wait_for_selector("#adjudicate")
        page.wait_for_selector("#decision")
        url = page.url
        current = item_id_of(url)
        if page.locator(".banner.bad[role=alert]").count():
            # The curator voted here: the page says so, saving is disabled and
            # Ctrl+Enter must not submit the form either.
            assert current == conflict_id
            assert "You voted on this item" in page.locator(".banner.bad").inner_text()
            assert page.locator("#decision button[type=submit]").is_disabled()
            if not conflicts_met:
                page.screenshot(
                    path=str(artifacts / "adjudicate-conflict-1280x800.png"), full_page=True
                )
            page.evaluate(
                """() => document.getElementById("decision").addEventListener("submit", e => {
                    window.__submitted = true; e.preventDefault(); })"""
            )
            page.keyboard.press("r")
            page.wait_for_selector("textarea[name=reason]:focus")
            page.keyboard.type("I know this one")
            page.keyboard.press("Control+Enter")
            assert not page.evaluate("() => window.__submitted === true")
            page.keyboard.press("Escape")  # leave the reason box, so n is a shortcut
            page.wait_for_selector("textarea[name=reason]:not(:focus)")
            conflicts_met += 1
            page.keyboard.press("n")
            page.wait_for_url(lambda u, url=url: u != url and bool(adjudicate_url.search(u)))
            continue

        key, reason = PLAN[len(resolved)]
        assert current != conflict_id
        assert page.locator("#decision button[type=submit]").is_enabled()
        image = page.locator(".prompt .part-image img")
        assert image.evaluate("img => img.complete && img.naturalWidth")
        page.keyboard.press(key)
        page.wait_for_selector("#decision textarea[name=reason]:focus")
        assert page.locator("#decision input[name=action][value=resolve]").is_checked()
        assert page.locator(f"#decision input[name=choice][value='{key}']").is_checked()
        page.keyboard.type(reason)
        assert page.locator("#decision textarea[name=reason]").input_value() == reason
        assert page.url == url  # "n", "b" in the reason did not navigate
        if not screenshot_taken:
            page.wait_for_selector(".math-display.math-rendered")
            assert page.locator(".math-error").count() == 0
            page.screenshot(path=str(artifacts / "adjudicate-1280x800.png"), full_page=True)
            screenshot_taken = True
        page.keyboard.press("Control+Enter")
        # saved, then redirected to the next contested item
        page.wait_for_url(lambda u, url=url: u != url and bool(adjudicate_url.search(u)))
        page.wait_for_selector(".messages .msg-success")
        assert page.locator(".messages .msg-success").inner_text() == "Saved: item resolved."
        assert item_id_of(page.url) != current
        resolved.append((current, key, reason))
    # "Next contested" (and the page after a save) never offer the item the
    # curator voted on; opened directly, it says why it cannot be decided here.
    assert conflicts_met == 0
    page.goto(f"{live_server.url}/p/{SLUG}/curation/{conflict_id}/")
    page.wait_for_selector("#decision")
    assert "You voted on this item" in page.locator(".banner.bad").inner_text()
    assert page.locator("#decision button[type=submit]").is_disabled()
    page.screenshot(path=str(artifacts / "adjudicate-conflict-1280x800.png"), full_page=True)
    page.evaluate(
        """() => document.getElementById("decision").addEventListener("submit", e => {
            window.__submitted = true; e.preventDefault(); })"""
    )
    page.keyboard.press("r")
    page.wait_for_selector("textarea[name=reason]:focus")
    page.keyboard.type("I know this one")
    page.keyboard.press("Control+Enter")
    assert not page.evaluate("() => window.__submitted === true")
    page.keyboard.press("Escape")
    page.wait_for_selector("textarea[name=reason]:not(:focus)")

    # Back to the queue with b: the two items left are still contested.
    url = page.url
    page.keyboard.press("b")
    page.wait_for_url(f"**/p/{SLUG}/curation/")
    page.wait_for_selector("#queue")
    remaining = N_ITEMS - len(PLAN)
    assert page.locator("#queue tbody tr").count() == remaining
    assert page.locator("nav.tabs a.active .count").inner_text() == str(remaining)
    assert f"{remaining} items" in page.locator("nav.pager").inner_text()
    queue_text = page.locator("#queue").inner_text()
    for item_id, _, _ in resolved:
        ext = project.items.get(pk=item_id).external_id
        assert ext not in queue_text
    assert project.items.get(pk=conflict_id).external_id in queue_text
    assert not errors, errors
    page.close()

    # The database agrees with what the curator did.
    assert [r[0] for r in resolved] == [pk for pk in order if pk != conflict_id][: len(PLAN)]
    for item_id, key, reason in resolved:
        v = Verdict.objects.get(item_id=item_id)
        assert (v.status, v.final_choice, v.provenance, v.decided_by) == (
            VerdictStatus.RESOLVED,
            key,
            "adjudicated",
            curator,
        )
        assert v.reason == reason
    events = AuditEvent.objects.filter(project=project, action="resolve").order_by("pk")
    assert [(e.item_id, e.actor, e.reason) for e in events] == [
        (item_id, curator, reason) for item_id, _, reason in resolved
    ]
    for e in events:
        assert e.before["status"] == "contested"
        assert e.after["status"] == "resolved" and e.after["decided_by"] == curator.pk
    conflict = Verdict.objects.get(item_id=conflict_id)
    assert (conflict.status, conflict.decided_by) == (VerdictStatus.CONTESTED, None)
    assert Verdict.objects.filter(project=project, status=VerdictStatus.CONTESTED).count() == (
        remaining
    )
