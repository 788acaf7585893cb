"""The demo finishes (issue 17): its three annotators judge every item, the
curator works the queue to empty in Chromium with the keyboard, and the
release holds every item the curator did not exclude.

The annotators vote through the services (360 votes; the compare page has
journeys of its own), seeded to pick the dataset's hidden better response 75%
of the time; everything the curator does goes through the browser. The
counts per status before and after go to tests/artifacts/finish-demo.json."""

import json
import random
import re

import pytest
from django.core.management import call_command

from annotate.loop.service import Vote, claim_next_item, submit_judgement, votes_may_come
from annotate.management.commands.seed_demo import DEMO_PASSWORD, DEMO_SLUG
from annotate.models import Item, Project
from curation.models import Release, ReleaseItem, Verdict, VerdictStatus
from curation.verdicts.service import stuck_items
from tests.e2e.compare_helpers import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

ACCURACY = 0.75
EXCLUDE_EVERY = 10  # the curator excludes every tenth contested item they meet


def counts(project) -> dict[str, int]:
    statuses = Verdict.objects.filter(project=project).values_list("status", flat=True)
    return {s: list(statuses).count(s) for s in VerdictStatus.values}


def judge_everything(project, usernames, seed=17):
    """Each annotator claims and votes until done; none is ever told that
    more may come once all three have stopped."""
    rng = random.Random(seed)
    users = [project.memberships.get(user__username=name).user for name in usernames]
    while True:
        leased = 0
        for user in users:
            a = claim_next_item(project=project, annotator=user)
            if a is None:
                continue
            leased += 1
            item = Item.objects.select_related("domain").get(pk=a.item_id)
            better = item.meta["prior_better"][-1]  # "Output1" -> "1"
            worse = "2" if better == "1" else "1"
            choice = better if rng.random() < ACCURACY else worse
            labels = {}
            if item.domain.is_correctness:
                labels = {
                    f"correct_{choice}": "yes",
                    f"correct_{'2' if choice == '1' else '1'}": "no",
                }
            submit_judgement(
                assignment_id=a.pk,
                annotator=user,
                vote=Vote(choice=choice, rationale="seeded demo vote", **labels),
            )
        if not leased:
            break
    assert not any(votes_may_come(project=project, annotator=u) for u in users)


def sign_in(page, base, username, next_url):
    log_in(page, base, username, next_url, password=DEMO_PASSWORD, keyboard=True)


def test_three_annotators_finish_the_demo_and_the_curator_empties_the_queue(
    live_server, browser, artifacts
):
    call_command("seed_demo", verbosity=0)
    project = Project.objects.get(slug=DEMO_SLUG)
    total = project.items.count()
    judge_everything(project, ["annotator1", "annotator2", "annotator3"])
    before = counts(project)
    assert before[VerdictStatus.NEEDS_VOTES] == 0, before
    assert not list(stuck_items(project))
    assert before[VerdictStatus.AGREED] + before[VerdictStatus.CONTESTED] == total

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    queue = f"/p/{DEMO_SLUG}/curation/"
    sign_in(page, live_server.url, "curator", queue)
    assert "Stuck 0" in page.locator("nav.tabs").inner_text().replace("\n", " ")
    adjudicate_url = re.compile(rf"/p/{DEMO_SLUG}/curation/(\d+)/$")
    excluded = decided = 0
    while page.locator("#queue tbody tr").count():
        page.locator("#queue tbody tr:first-child td:first-child a").click()
        page.wait_for_url(adjudicate_url)
        # Work through "next contested" until the queue wraps to nothing.
        while True:
            page.wait_for_selector("#decision")
            url = page.url
            item_id = int(adjudicate_url.search(url).group(1))
            item = Item.objects.get(pk=item_id)
            decided += 1
            if decided % EXCLUDE_EVERY == 0:
                page.keyboard.press("x")
                page.locator("select[name=category]").select_option("ambiguous")
                page.locator("#decision textarea[name=reason]").focus()
                page.keyboard.type("Both responses are defensible; leave it out.")
                excluded += 1
            else:
                side = "1" if item.votes_1 >= item.votes_2 else "2"
                page.keyboard.press(side)
                page.wait_for_selector("#decision textarea[name=reason]:focus")
                page.keyboard.type(f"Read both; response {side} answers the image.")
            page.keyboard.press("Control+Enter")
            page.wait_for_load_state()
            page.wait_for_selector(".messages .msg-success")
            if (
                not adjudicate_url.search(page.url)
                or int(adjudicate_url.search(page.url).group(1)) == item_id
            ):
                break  # no next contested item: back on the same page
        page.goto(f"{live_server.url}{queue}")
    after = counts(project)
    assert after[VerdictStatus.CONTESTED] == 0 and after[VerdictStatus.NEEDS_VOTES] == 0
    assert after[VerdictStatus.EXCLUDED] == excluded
    assert decided == before[VerdictStatus.CONTESTED]

    page.goto(f"{live_server.url}/p/{DEMO_SLUG}/releases/new/")
    assert page.locator("input[name=domains]:checked").count() == 6
    page.get_by_role("button", name="Build release").click()
    page.wait_for_url(f"**/p/{DEMO_SLUG}/releases/*/")
    page.wait_for_selector("h1 .status-ready", timeout=60_000)
    release = Release.objects.get(project=project)
    in_release = ReleaseItem.objects.filter(release=release).count()
    assert in_release == total - excluded
    page.screenshot(path=str(artifacts / "finish-demo-release-1280x800.png"), full_page=True)
    summary = {
        "items": total,
        "before_curation": before,
        "after_curation": after,
        "curator_decisions": decided,
        "excluded": excluded,
        "in_release": in_release,
    }
    (artifacts / "finish-demo.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary))
    assert not errors, errors
    page.close()
