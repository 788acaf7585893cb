"""A curator scores RewardBench 2 classifier scores on a RewardBench 2
release's leaderboard in real Chromium, by keyboard (the file through the
file input, the format chosen from the select), and reads the RewardBench 2
table; axe-core finds nothing on the page at desktop and phone sizes."""

import json

import pytest

from annotate.models import Membership
from tests.curation.benchmarks.rewardbench2.test_rewardbench2_end_to_end import (
    rb2_records,
    release_of,
)
from tests.e2e.test_accessibility import AXE_OPTIONS, SIZES
from tests.e2e.test_mmrb2_leaderboard_journey import tab_to
from tests.e2e.test_release_journey import login
from tests.factories import make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_curator_scores_rewardbench2_predictions_by_keyboard(
    live_server, browser, artifacts, tmp_path
):
    from axe_playwright_python.sync_playwright import Axe

    from annotate.importing.service import import_items_from_paths
    from annotate.models import Task
    from curation.models import Verdict
    from tests.factories import make_project

    project = make_project(slug="rb2-board", task=Task.BEST_OF_N, seed=5)
    path = tmp_path / "rb2.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rb2_records()))
    import_items_from_paths(project=project, dataset=path)
    Verdict.objects.filter(project=project).update(
        status="agreed", final_choice="1", provenance="gold"
    )
    release, _ = release_of(project)
    user = make_user("rb2scorer")
    Membership.objects.create(project=project, user=user, role="curator")
    board = f"/p/{project.slug}/releases/{release.pk}/leaderboard/"
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    login(page, live_server.url, "rb2scorer", board)
    page.wait_for_selector("h1:has-text('Leaderboard')")
    assert page.get_by_text("No RewardBench 2 predictions scored yet.").is_visible()

    # The chosen completion gets the top score everywhere: 100 % on each subset.
    scores = {r["id"]: [1.0] * r["num_correct"] + [0.0] * r["num_incorrect"] for r in rb2_records()}
    tab_to(page, "input[name=name]")
    page.keyboard.type("rm-top")
    page.set_input_files(
        "input[name=predictions]",
        {
            "name": "rm-top.json",
            "mimeType": "application/json",
            "buffer": json.dumps(scores).encode(),
        },
    )
    tab_to(page, "select[name=format]")
    page.select_option("select[name=format]", "rewardbench2")
    tab_to(page, "form[enctype='multipart/form-data'] button[type=submit]")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Scored rm-top")
    # The overall is the mean of the six subsets: (5 + 1.01) / 6, a little over
    # 100 % (the published Ties weights sum to 1.01); the entry sorts as 100 %.
    from curation.models import Evaluation

    entry = Evaluation.objects.get(release=release, name="rm-top")
    assert entry.report["rewardbench2"]["overall"] == pytest.approx(6.01 / 6)
    assert entry.accuracy == 1.0

    row = page.locator('table.rewardbench2-leaderboard tr[data-name="rm-top"]')
    assert row.locator('td[data-subset="Math"]').inner_text().startswith("100.0")
    # Ties: accurate everywhere; the tied prompts' correct scores are equal
    # (spread 0), so the margin term is tanh(inf) = 1: 0.3+0.3+0.2+0.2+0.01.
    assert row.locator('td[data-subset="Ties"]').inner_text().startswith("101.0")
    page.screenshot(path=str(artifacts / "rewardbench2-leaderboard-1280x900.png"), full_page=True)

    axe = Axe()
    found = []
    for size, options in SIZES.items():
        context = browser.new_context(**options)
        sized = context.new_page()
        login(sized, live_server.url, "rb2scorer", board)
        sized.wait_for_selector("h1:has-text('Leaderboard')")
        results = axe.run(sized, options=AXE_OPTIONS)
        if results.violations_count:
            found.append(f"{size}\n{results.generate_report()}")
        assert sized.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        if size == "phone":
            sized.screenshot(
                path=str(artifacts / "rewardbench2-leaderboard-phone.png"), full_page=True
            )
        context.close()
    assert not found, "\n\n".join(found)
    assert errors == []
