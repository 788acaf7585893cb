"""The leaderboard tables of MM-RLHF-RewardBench, Omni-RewardBench,
VL-RewardBench, the ranked benchmark and VideoRewardBench (style), and each entry's per-item results
page: a small release of each with one scored evaluation, opened in real
Chromium; the per-item page is reached from the leaderboard by keyboard
(Tab to the entry's link, Enter), and axe-core finds nothing on either page
at desktop and phone sizes."""

import io
import json

import pytest
from PIL import Image
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.importing.service import import_items_from_paths
from annotate.models import Item, Task
from curation.models import Evaluation, Verdict
from tests.annotate.importing import mmrlhf_sets, videorb_sets
from tests.curation.benchmarks.mmrlhf import test_mmrlhf_end_to_end as mmrlhf_e2e
from tests.curation.benchmarks.omni import test_omni_end_to_end as omni_e2e
from tests.curation.benchmarks.ranked import test_ranked_end_to_end as ranked_e2e
from tests.curation.benchmarks.videorb import test_videorb_end_to_end as videorb_e2e
from tests.curation.benchmarks.vlrb import official
from tests.curation.benchmarks.vlrb import test_vlrb_end_to_end as vlrb_e2e
from tests.e2e.test_accessibility import AXE_OPTIONS, SIZES
from tests.e2e.test_mmrb2_leaderboard_journey import tab_to
from tests.e2e.test_release_journey import login
from tests.factories import make_member, make_project

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def mmrlhf_release(tmp_path):
    project = make_project(slug="mm-a11y", seed=5)
    path = mmrlhf_sets.write(tmp_path / "src", ensure_ascii=False)
    import_items_from_paths(project=project, dataset=path, fmt="mmrlhf")
    mmrlhf_e2e.decide(project)
    release, _ = mmrlhf_e2e.release_of(project)
    rewards = [[1.0, 0.0]] * len(mmrlhf_sets.rows())
    rewards[3] = [0.0, 2.0]
    lines = [
        {"id": r["id"], "rewards": w} for r, w in zip(mmrlhf_sets.rows(), rewards, strict=True)
    ]
    return project, release, "\n".join(json.dumps(x) for x in lines), "mmrlhf"


def omni_release(tmp_path):
    project = make_project(slug="omni-a11y", seed=3)
    path = tmp_path / "text_to_text_preferences.json"
    path.write_text(json.dumps(omni_e2e.omni_records(), ensure_ascii=False), encoding="utf-8")
    import_items_from_paths(project=project, dataset=path)
    for item in Item.objects.filter(project=project):
        choice = item.gold_choice or "tie"
        Verdict.objects.filter(pk=item.verdict.pk).update(
            status="agreed" if choice != "tie" else "resolved",
            final_choice=choice,
            provenance="majority",
        )
    release, _ = omni_e2e.release_of(project)
    ids = [r["ID"] for r in omni_e2e.BENCHMARK.judge_records(release)]
    outputs = {ids[0]: "[[A]]", ids[1]: "[[A]] or maybe [[B]]"}
    body = "\n".join(json.dumps({"id": k, "output": v}) for k, v in outputs.items())
    return project, release, body, "omni"


def vlrb_release(tmp_path):
    project = make_project(slug="vlrb-a11y", seed=3)
    source = vlrb_e2e.write_official(tmp_path)
    import_items_from_paths(project=project, dataset=source, fmt="vlrb")
    vlrb_e2e.decide_as_imported(project)
    release, _ = vlrb_e2e.release_of(project)
    return project, release, official.official_lines(), "vlrb"


def ranked_release(tmp_path):
    project = make_project(slug="ranked-a11y", task=Task.RANKING, seed=5)
    (tmp_path / "img").mkdir()
    Image.new("RGB", (16, 12), "blue").save(tmp_path / "img/q1.png")
    path = tmp_path / "mr2.jsonl"
    records = ranked_e2e.ranked_records()
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    import_items_from_paths(project=project, dataset=path)
    ranked_e2e.decide_as_imported(project)
    release, _ = ranked_e2e.release_of(project)
    predictions = {
        "q1": {"scores": [0.9, 0.9, 0.1, -1.0]},
        "q2": {"ranking": [2, 1]},
        "q3": {"scores": [8, 6, 7, 5, 4, 3, 2, 1]},
    }
    body = "\n".join(json.dumps({"id": k, **v}) for k, v in predictions.items())
    return project, release, body, "ranked"


def videorb_release(tmp_path):
    project = make_project(slug="vrb-a11y", seed=5)
    path = videorb_sets.write(tmp_path / "src", ensure_ascii=False)
    import_items_from_paths(project=project, dataset=path)
    videorb_e2e.decide(project)
    release, _ = videorb_e2e.release_of(project)
    lines = [
        {"id": r["id"], "chosen_score": n % 3, "rejected_score": 1}
        for n, r in enumerate(videorb_sets.rows())
    ]
    return project, release, "\n".join(json.dumps(x) for x in lines), "videorb"


BUILDERS = {
    "mmrlhf": mmrlhf_release,
    "omni": omni_release,
    "vlrb": vlrb_release,
    "ranked": ranked_release,
    "videorb": videorb_release,
}


@pytest.mark.parametrize("benchmark", list(BUILDERS))
def test_leaderboard_and_per_item_page_pass_axe_and_work_by_keyboard(
    benchmark, live_server, browser, artifacts, tmp_path
):
    from axe_playwright_python.sync_playwright import Axe

    project, release, body, fmt = BUILDERS[benchmark](tmp_path)
    curator = make_member(project, role="curator")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=curator).key}")
    url = f"/api/v1/projects/{project.slug}/releases/{release.pk}/evaluations/"
    r = api.post(
        url,
        {"name": "rm-1", "predictions": io.BytesIO(body.encode()), "predictions_format": fmt},
        format="multipart",
    )
    assert r.status_code == 201, r.content
    entry = Evaluation.objects.get(release=release, name="rm-1")
    board = f"/p/{project.slug}/releases/{release.pk}/leaderboard/"
    items = f"{board}{entry.pk}/"

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    login(page, live_server.url, curator.username, board)
    page.wait_for_selector("h1:has-text('Leaderboard')")
    assert page.locator(f"table.{benchmark}-leaderboard").count() == 1
    # By keyboard from the leaderboard to the entry's per-item results.
    tab_to(page, f'table.{benchmark}-leaderboard a[href="{items}"]', limit=150)
    page.keyboard.press("Enter")
    page.wait_for_url(f"**{items}")
    page.wait_for_selector("h1:has-text('per item')")
    # The Wrong/Right/All tabs and the filters work by keyboard too.
    tab_to(page, 'nav.tabs a[href^="?show=all"]')
    page.keyboard.press("Enter")
    page.wait_for_url("**?show=all")
    assert page.locator('nav.tabs a[aria-current="page"]').inner_text() == "All"
    tab_to(page, "form.filters button[type=submit]")
    page.keyboard.press("Enter")
    page.wait_for_url("**show=all&category=&sub_bucket=")
    page.screenshot(path=str(artifacts / f"{benchmark}-items-1280x900.png"), full_page=True)

    axe = Axe()
    found = []
    for size, options in SIZES.items():
        context = browser.new_context(**options)
        sized = context.new_page()
        sized.on("pageerror", lambda exc: errors.append(str(exc)))
        login(sized, live_server.url, curator.username, board)
        for address in (board, items):
            sized.goto(live_server.url + address)
            results = axe.run(sized, options=AXE_OPTIONS)
            if results.violations_count:
                found.append(f"{benchmark} {address} {size}\n{results.generate_report()}")
            assert sized.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), (
                f"{benchmark} {address} {size} scrolls sideways"
            )
        context.close()
    assert not found, "\n\n".join(found)
    assert errors == []
