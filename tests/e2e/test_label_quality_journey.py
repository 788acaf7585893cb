"""Suspected label errors (issue 23), in Chromium: on the demo project five
items get a wrong unanimous majority, two judges uploaded on the leaderboard
mostly side with the truth (so they disagree with those five labels), the
curator computes label quality, the five items are the top of the queue, and
the curator overturns each of them with the keyboard alone.

The annotators vote through the services (the compare page has journeys of
its own): right on every other item, unanimously wrong on the planted ones.
Each judge is wrong on its own tenth of the other items (never both on the
same one), as independent judges of accuracy 0.9 would be."""

import json
import re

import pytest
from django.core.management import call_command

from annotate.loop.service import Vote, claim_next_item, submit_judgement
from annotate.management.commands.seed_demo import DEMO_PASSWORD, DEMO_SLUG
from annotate.models import Item, Project
from curation.models import AuditEvent, Release, Verdict
from curation.releases import publishing
from curation.releases.build import build_release
from curation.releases.service import create_release
from tests.curation.quality.conftest import needs_quality_extra
from tests.e2e.compare_helpers import log_in

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.django_db(transaction=True),
    needs_quality_extra,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

N_PLANTED = 5


def truth(item) -> str:
    return item.meta["prior_better"][-1]  # "Output1" -> "1" (import order = canonical)


def other(side: str) -> str:
    return "2" if side == "1" else "1"


def vote_everything(project, planted: set[int]) -> None:
    users = [project.memberships.get(user__username=f"annotator{n}").user for n in (1, 2, 3)]
    while True:
        leased = 0
        for user in users:
            a = claim_next_item(project=project, annotator=user)
            if a is None:
                continue
            leased += 1
            item = Item.objects.select_related("domain").get(pk=a.item_id)
            choice = other(truth(item)) if item.pk in planted else truth(item)
            labels = {}
            if item.domain.is_correctness:
                labels = {f"correct_{choice}": "yes", f"correct_{other(choice)}": "no"}
            submit_judgement(
                assignment_id=a.pk,
                annotator=user,
                vote=Vote(choice=choice, rationale="seeded demo vote", **labels),
            )
        if not leased:
            return


def judge_file(release, items_by_id, planted, wrong_every: int, offset: int):
    """JSONL judge text for the release: the truth, except on its own tenth
    of the items that were not planted; and how many of its picks differ from
    the release's label (those errors, and every planted item)."""
    from common.storage import read_stored

    records = json.loads(
        read_stored(publishing.release_storage(), f"{release.folder}/all_data.json")
    )
    lines = []
    against_release = 0
    for n, r in enumerate(records):
        item = items_by_id[r["ID"]]
        side = truth(item)
        if n % wrong_every == offset and item.pk not in planted:
            side = other(side)
        against_release += side != truth(item) or item.pk in planted
        slot_text = item.response_1 if side == "1" else item.response_2
        verdict = "A" if r["Output1"] == slot_text else "B"
        lines.append(json.dumps({"ID": r["ID"], "output": f"Judgement: [[{verdict}]]"}))
    return "\n".join(lines).encode(), against_release


def sign_in(page, base, username, next_url):
    log_in(page, base, username, next_url, password=DEMO_PASSWORD, keyboard=True)


def test_planted_wrong_labels_top_the_queue_and_are_overturned_by_keyboard(
    live_server, browser, artifacts
):
    call_command("seed_demo", verbosity=0)
    project = Project.objects.get(slug=DEMO_SLUG)
    items = list(project.items.order_by("external_id"))
    # Not gold items: a majority against gold is contested, not agreed.
    plain = [i for i in items if not i.gold_choice]
    step = len(plain) // N_PLANTED
    planted = {plain[n].pk for n in range(3, len(plain), step)[:N_PLANTED]}
    assert len(planted) == N_PLANTED
    vote_everything(project, planted)
    for pk in planted:  # a wrong unanimous majority: agreed, released
        v = Verdict.objects.get(item_id=pk)
        assert (v.status, v.provenance) == ("agreed", "unanimous")

    curator = project.memberships.get(user__username="curator").user
    release = create_release(
        project=project,
        version="v-lq",
        notes="",
        domains=list(project.domains.values_list("slug", flat=True)),
        seed=3,
        user=curator,
        enqueue=False,
    )
    release = build_release(release_id=release.pk)
    assert release.status == "ready", release.error
    by_id = {i.external_id: i for i in items}
    wrong_counts = {}

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    board = f"/p/{DEMO_SLUG}/releases/{release.pk}/leaderboard/"
    sign_in(page, live_server.url, "curator", board)
    for name, offset in (("judge-a", 1), ("judge-b", 6)):
        data, wrong_counts[name] = judge_file(release, by_id, planted, 10, offset)
        page.fill("input[name=name]", name)
        page.set_input_files(
            "input[name=predictions]",
            {
                "name": f"{name}.jsonl",
                "mimeType": "application/jsonl",
                "buffer": data,
            },
        )
        page.get_by_role("button", name="Score").click()
        page.wait_for_selector(f"text=Scored {name}")

    # Drill-down: judge-a's wrong items, then every entry on the first one.
    page.get_by_role("link", name="judge-a").click()
    page.wait_for_selector("#entry-items")
    wrong = page.locator("#entry-items tbody tr").count()
    assert wrong == wrong_counts["judge-a"]
    page.screenshot(path=str(artifacts / "label-quality-drilldown-1280x900.png"), full_page=True)
    page.locator("#entry-items tbody tr:first-child a", has_text="how every entry").click()
    page.wait_for_selector("#item-models")
    assert page.locator("#item-models tbody tr").count() == 2

    queue = f"/p/{DEMO_SLUG}/label-quality/"
    page.goto(f"{live_server.url}{queue}")
    assert page.locator("input[name=entries]:checked").count() == 2
    page.get_by_role("button", name="Compute label quality").click()
    page.wait_for_url(f"**{queue}")
    page.wait_for_selector("#quality-status:has-text('Computed')")
    top = page.locator("#suspect-table tbody tr td:nth-child(2) a").all_inner_texts()[:N_PLANTED]
    page.screenshot(path=str(artifacts / "label-quality-queue-1280x900.png"), full_page=True)
    assert {by_id[t].pk for t in top} == planted
    page.screenshot(path=str(artifacts / "label-quality-queue-1280x900.png"), full_page=True)

    review = re.compile(rf"/p/{DEMO_SLUG}/label-quality/(\d+)/$")
    page.keyboard.press("s")
    page.wait_for_url(review)
    overturned = []
    for n in range(N_PLANTED):
        page.wait_for_selector("#review-decision")
        item_id = int(review.search(page.url).group(1))
        assert item_id in planted
        if n == 0:
            page.screenshot(path=str(artifacts / "label-quality-review-1280x900.png"))
        page.keyboard.press("o")
        page.wait_for_selector("#review-decision textarea[name=reason]:focus")
        page.keyboard.type("Both judges, and the response text, say the other side.")
        page.keyboard.press("Control+Enter")
        page.wait_for_load_state()
        page.wait_for_selector(".messages .msg-success")
        overturned.append(item_id)
    assert set(overturned) == planted
    for pk in planted:
        v = Verdict.objects.get(item_id=pk)
        item = Item.objects.get(pk=pk)
        assert (v.status, v.provenance, v.final_choice) == ("resolved", "adjudicated", truth(item))
        assert AuditEvent.objects.filter(item_id=pk, action="resolve", actor=curator).exists()
    page.goto(f"{live_server.url}{queue}")
    remaining = page.locator("#suspect-table tbody tr td:nth-child(2) a").all_inner_texts()
    assert not {by_id[t].pk for t in remaining} & planted
    assert Release.objects.filter(project=project).count() == 1
    assert not errors, errors
    page.close()
