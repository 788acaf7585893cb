"""Issue 31: the leaderboard with three entries (two of equal score) is
readable at 1280 px without sideways scrolling of its table, fits a 390 px
phone (the table scrolls inside its own region), passes axe at both sizes,
and is photographed (tests/artifacts/leaderboard-*.png)."""

import json
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from curation.evaluation.service import evaluate_upload
from tests.curation.releases.test_releases import built, make_release_project
from tests.e2e.compare_helpers import log_in
from tests.e2e.test_accessibility import AXE_OPTIONS, SIZES
from tests.factories import make_member, make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def lines(records, wrong=()):
    out = []
    for r in records:
        right = "A" if r["Better"] == "Output1" else "B"
        pick = ("B" if right == "A" else "A") if r["ID"] in wrong else right
        out.append(json.dumps({"ID": r["ID"], "output": f"[[{pick}]]"}))
    return "\n".join(out).encode()


@pytest.mark.parametrize("size", SIZES)
def test_leaderboard_is_readable_at_1280_and_on_a_phone(
    live_server, browser, tmp_path, size, artifacts
):
    from axe_playwright_python.sync_playwright import Axe

    release = built(make_release_project(tmp_path, slug="lbe"))
    make_member(release.project, user=make_user("cur"), role="curator")
    records = json.loads((Path(settings.MEDIA_ROOT) / release.folder / "all_data.json").read_text())
    for name, wrong in (
        ("strong-judge-with-a-long-name", ()),
        ("twin-a", {records[0]["ID"]}),
        ("twin-b", {records[0]["ID"]}),
    ):
        evaluate_upload(
            release=release, name=name, predictions=lines(records, wrong), filename="p.jsonl"
        )
    context = browser.new_context(**SIZES[size])
    page = context.new_page()
    url = reverse("leaderboard", args=["lbe", release.pk])
    log_in(page, live_server.url, "cur", url)
    page.wait_for_selector("table.leaderboard")
    page.screenshot(path=str(artifacts / f"leaderboard-{size}.png"), full_page=True)
    fits = page.evaluate(
        """() => {
          const doc = document.documentElement;
          const region = document.querySelector('table.leaderboard').parentElement;
          return {page: doc.scrollWidth - doc.clientWidth,
                  table: region.scrollWidth - region.clientWidth};
        }"""
    )
    assert fits["page"] <= 0, fits
    if size == "desktop":
        assert fits["table"] <= 0, fits  # every column in view at 1280 px
    # Equal scores: their dots sit side by side, none on top of another.
    dots = page.evaluate(
        "() => [...document.querySelectorAll('.chart circle')]"
        ".map(c => c.getAttribute('cx') + ',' + c.getAttribute('cy'))"
    )
    assert len(dots) == len(set(dots)) > 0
    results = Axe().run(page, options=AXE_OPTIONS)
    assert not results.violations_count, results.generate_report()
    context.close()
