"""Issue 31, "Done when": a newcomer's first hour in real Chromium, never
touching /admin/. The site admin creates a project on the setup pages,
imports the published VL-RewardBench shape (JSONL with chosen/rejected, no
category, repeated IDs) in one attempt by choosing the options first,
invites a colleague by link; the colleague sets a password and annotates by
keyboard, flagging one broken item; the admin, as curator, excludes that
contested item by keyboard and the audit entry holds the reason typed to the
letter; browses the data grid with a filter; builds a release and a training
mix, downloads both and loads each with `datasets` by the same config names
(`default` and `trl`); scores a predictions file on the leaderboard. Every
main page passes axe-core at 1280 px and at 390 px."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from annotate.models import Item, Judgement, Membership, Project
from curation.models import AuditEvent, Mix, Release, ReleaseStatus, Verdict, VerdictStatus
from tests.annotate.importing.public_sets import VL_DOMAIN_MAP, vl_rewardbench
from tests.curation.releases.test_shared_configs import elsewhere, load  # noqa: F401
from tests.e2e.compare_helpers import log_in, start
from tests.e2e.test_accessibility import SIZES
from tests.e2e.test_keyboard_paths_journey import TRICKY, focused, save_and_wait
from tests.e2e.test_mix_journey import no_axe_violations
from tests.e2e.test_setup_journey import login
from tests.factories import make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SLUG = "vlrb"
PASSWORD = "Colleague-Secret-2026"
JUDGED = 3  # the colleague's first sitting; the last one is flagged as broken
FLAG = "image 2r is cut off"


def vote(page, *, flag: str = "") -> None:
    """One vote by keyboard for the response the file calls chosen (the
    rejected one names a hallucinated object); on a correctness domain,
    chosen is correct and the other not."""
    page.wait_for_selector("#work[data-submitted='0']")
    page.wait_for_function("() => window.htmx && document.readyState === 'complete'")
    left = page.locator(".response[data-side=left]").inner_text()
    chosen_left = "hallucinated" not in left
    page.keyboard.press("1" if chosen_left else "2")
    if page.locator("#work").get_attribute("data-correctness") == "1":
        for key in ("q", "p") if chosen_left else ("w", "o"):
            page.keyboard.press(key)
    if flag:
        page.keyboard.press("x")
        assert focused(page) == "INPUT:problem_reason"
        page.keyboard.type(flag)
    url = page.url
    # Enter submits from the page; from a text box, Ctrl+Enter does.
    with page.expect_response(lambda r: r.url.endswith("/submit/")):
        page.keyboard.press("Control+Enter" if flag else "Enter")
    page.wait_for_function("u => location.href !== u", arg=url)


def logged_in(page) -> None:
    """Until the log-in's answer is in: the helpers' wait_for_url also
    matches the log-in page's own URL (`?next=/p/…/`)."""
    page.get_by_role("button", name="Log out").wait_for()


def sideways(page) -> int:
    """How far the page scrolls sideways (wide tables scroll in their own
    region, never the page)."""
    return page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )


def download(page, link_name: str, target: Path) -> Path:
    """Click a download link, unzip what came, return the folder inside."""
    with page.expect_download() as info:
        page.get_by_role("link", name=link_name).click()
    archive = target / info.value.suggested_filename
    info.value.save_as(archive)
    with zipfile.ZipFile(archive) as zf:
        zf.extractall(target)
        (top,) = {name.split("/")[0] for name in zf.namelist()}
    return target / top


def test_a_newcomers_first_hour(live_server, browser, artifacts, tmp_path, elsewhere):  # noqa: F811
    base = live_server.url
    make_user("boss", is_superuser=True, is_staff=True)
    vl = vl_rewardbench()
    dataset, images = tmp_path / "vl_rewardbench.jsonl", tmp_path / "images.zip"
    dataset.write_bytes(vl.jsonl())
    images.write_bytes(vl.images_zip())
    admin_requests: list[str] = []
    errors: list[str] = []
    pages: dict[str, str] = {}  # name → URL, for axe on a phone at the end

    def watch(page):
        page.on("request", lambda r: admin_requests.append(r.url) if "/admin/" in r.url else None)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        return page

    def checked(page, name: str) -> None:
        """axe at 1280 px now, the page not scrolling sideways; the same URL
        on a phone later."""
        no_axe_violations(page, name)
        assert sideways(page) <= 0, name
        pages[name] = page.url

    desktop = browser.new_context(**SIZES["desktop"], accept_downloads=True)
    page = watch(desktop.new_page())
    log_in(page, base, "boss", "/")
    logged_in(page)

    # 1. A project, from the setup pages: one vote an item (a vote flagging
    # a problem still sends its item to the curators), no escalation.
    page.get_by_role("link", name="New project").first.click()
    page.wait_for_url("**/projects/new/")
    page.fill("input[name=name]", "VL-RewardBench relabel")
    page.fill("input[name=slug]", SLUG)
    page.fill("input[name=votes_per_item]", "1")
    page.fill("input[name=escalation_votes]", "0")
    checked(page, "project_new")
    page.get_by_role("button", name="Create project").click()
    page.wait_for_url(f"**/p/{SLUG}/")
    project = Project.objects.get(slug=SLUG)

    # 2. The published file in one attempt: the options are chosen before
    # the first click (the domain from the ID's prefix, repeated IDs kept).
    page.get_by_role("link", name="Import items").click()
    page.wait_for_url(f"**/p/{SLUG}/import/")
    checked(page, "import")
    page.set_input_files("input[name=dataset]", str(dataset))
    page.set_input_files("input[name=images]", str(images))
    page.select_option("select[name=domain_from]", "id-prefix")
    page.fill("textarea[name=domain_map]", VL_DOMAIN_MAP)
    page.select_option("select[name=duplicates]", "suffix")
    page.get_by_role("button", name="Import").click()
    page.wait_for_url(f"**/p/{SLUG}/")
    assert f"{len(vl.rows)} created" in page.locator(".messages").inner_text()
    assert Item.objects.filter(project=project).count() == len(vl.rows)
    assert "1 vote per item" in page.locator("main").inner_text()  # not "1 votes"
    checked(page, "project")

    # 3. A one-use invitation link; the colleague sets a password and joins.
    page.get_by_role("link", name="Members").click()
    page.wait_for_url(f"**/p/{SLUG}/members/")
    page.fill("input[name=note]", "for Ana")
    page.get_by_role("button", name="Create invitation link").click()
    page.wait_for_selector("#new-invitation-link")
    link = page.input_value("#new-invitation-link")
    checked(page, "members")

    colleague_context = browser.new_context(**SIZES["desktop"])
    colleague = watch(colleague_context.new_page())
    colleague.goto(link)
    colleague.fill("input[name=username]", "ana")
    colleague.fill("input[name=password1]", PASSWORD)
    colleague.fill("input[name=password2]", PASSWORD)
    no_axe_violations(colleague, "invitation_accept")
    colleague.get_by_role("button", name="Create account and join").click()
    colleague.wait_for_url(f"**/p/{SLUG}/")
    assert Membership.objects.get(project=project, user__username="ana").role == "annotator"

    # 4. The colleague annotates by keyboard; the last item's image is broken.
    start(colleague, base, SLUG)
    no_axe_violations(colleague, "compare")
    assert sideways(colleague) <= 0
    for n in range(JUDGED):
        vote(colleague, flag=FLAG if n == JUDGED - 1 else "")
    colleague_context.close()
    votes = list(Judgement.objects.order_by("pk").select_related("assignment__item__verdict"))
    assert [j.assignment.annotator.username for j in votes] == ["ana"] * JUDGED
    assert [j.assignment.item.verdict.status for j in votes] == ["agreed"] * (JUDGED - 1) + [
        "contested"
    ]
    assert (votes[-1].flagged_problem, votes[-1].problem_reason) == (True, FLAG)
    flagged = votes[-1].assignment.item

    # 5. The curator excludes the contested item by keyboard: x, the reason
    # (digits and shortcut letters are text there), Ctrl+Enter.
    page.goto(f"{base}/p/{SLUG}/curation/")
    checked(page, "curation_queue")
    page.locator("#queue a[href*='/curation/']").first.click()
    page.wait_for_url(f"**/p/{SLUG}/curation/{flagged.pk}/")
    page.wait_for_function("() => document.readyState === 'complete'")
    checked(page, "adjudicate")
    page.keyboard.press("x")
    assert focused(page) == "TEXTAREA:reason"
    page.keyboard.type(TRICKY)
    save_and_wait(page, page.url)
    event = AuditEvent.objects.filter(item=flagged).order_by("-pk").first()
    assert (event.action, event.reason) == ("exclude", TRICKY)
    assert Verdict.objects.get(item=flagged).status == VerdictStatus.EXCLUDED
    page.goto(f"{base}/p/{SLUG}/audit/")
    log = page.locator("main").inner_text()
    assert TRICKY in log and "import" in log  # the import left its trace too
    checked(page, "audit")

    # 6. The data grid, filtered: the agreed items, and the excluded one.
    page.goto(f"{base}/p/{SLUG}/items/")
    assert page.locator("p.count").inner_text() == f"{len(vl.rows)} items match."
    page.select_option("#id_status", "agreed")
    page.locator("#id_q").press("Enter")
    page.wait_for_url("**status=agreed**")
    rows = page.locator("#grid tbody tr")
    assert rows.count() == JUDGED - 1
    checked(page, "grid")
    page.goto(f"{base}/p/{SLUG}/items/?status=excluded")
    assert page.locator("#grid tbody tr").count() == 1
    assert flagged.external_id in page.locator("#grid tbody").inner_text()

    # 7. A release: built (eagerly, once committed), its page ends up ready.
    page.goto(f"{base}/p/{SLUG}/releases/new/")
    checked(page, "release_new")
    page.get_by_role("button", name="Build release").click()
    page.wait_for_url(f"**/p/{SLUG}/releases/*/")
    page.wait_for_selector("h1 .status-ready", timeout=30_000)
    release = Release.objects.get(project=project)
    assert release.status == ReleaseStatus.READY and release.counts
    checked(page, "release")
    release_root = download(page, f"Download {SLUG}-v1.0.zip", tmp_path / "release")

    # 8. A training mix of that release.
    page.goto(f"{base}/mixes/new/")
    page.fill("#id_name", "vl-first")
    page.get_by_role("checkbox", name="VL-RewardBench relabel — release v1.0", exact=True).check()
    checked(page, "mix_new")
    page.get_by_role("button", name="Build mix").click()
    page.wait_for_url("**/mixes/*/")
    page.wait_for_selector("h1 .status-ready", timeout=30_000)
    mix = Mix.objects.get(name="vl-first")
    assert mix.status == ReleaseStatus.READY, mix.error
    checked(page, "mix")
    mix_root = download(page, f"Download vl-first-{mix.version}.zip", tmp_path / "mix")

    # 9. Both load with `datasets` by the same config names (the train split:
    # every domain), from another working directory, offline.
    chosen = {"A faithful description", "The right answer"}
    records = load(release_root, elsewhere, "default", split="train")
    assert len(records) == JUDGED - 1 and flagged.external_id not in records["ID"]
    for record in records:
        better = record[record["Better"]]
        assert any(better.startswith(c) for c in chosen), record
    for folder in (release_root, mix_root):
        pairs = load(folder, elsewhere, "trl", split="train")
        assert len(pairs) == JUDGED - 1
        assert all(any(row["chosen"][0]["content"].startswith(c) for c in chosen) for row in pairs)
    mix_rows = load(mix_root, elsewhere, "default", split="train")
    assert len(mix_rows) == JUDGED - 1

    # 10. A leaderboard entry: one of the two right, 50%.
    predictions = tmp_path / "predictions.jsonl"
    all_data = json.loads((release_root / "all_data.json").read_text())
    lines = []
    for n, record in enumerate(all_data):
        right = "A" if record["Better"] == "Output1" else "B"
        pick = right if n == 0 else ("B" if right == "A" else "A")
        lines.append(json.dumps({"ID": record["ID"], "output": f"[[{pick}]]"}))
    predictions.write_text("\n".join(lines) + "\n")
    page.goto(f"{base}/p/{SLUG}/releases/{release.pk}/leaderboard/")
    page.fill("input[name=name]", "my-judge")
    page.set_input_files("input[name=predictions]", str(predictions))
    page.get_by_role("button", name="Score", exact=True).click()
    page.wait_for_selector(".messages >> text=Scored my-judge.")
    row = page.locator("table.leaderboard tbody tr", has_text="my-judge").first
    assert "50.0" in row.inner_text(), row.inner_text()
    checked(page, "leaderboard")
    page.screenshot(path=str(artifacts / "first-hour-leaderboard-1280.png"), full_page=True)
    desktop.close()

    # 11. The same pages on a phone.
    phone = browser.new_context(**SIZES["phone"])
    small = watch(phone.new_page())
    log_in(small, base, "boss", "/")
    logged_in(small)
    overflow: dict[str, int] = {}
    for name, url in pages.items():
        small.goto(url)
        assert small.url == url
        small.wait_for_function("() => document.readyState === 'complete'")
        no_axe_violations(small, f"{name} (phone)")
        overflow[name] = sideways(small)
    phone.close()
    assert {k: v for k, v in overflow.items() if v > 0} == {}
    # The colleague comes back on a phone with the password they chose.
    phone = browser.new_context(**SIZES["phone"])
    small = watch(phone.new_page())
    login(small, base, "ana", PASSWORD, f"/p/{SLUG}/")
    logged_in(small)
    start(small, base, SLUG)
    no_axe_violations(small, "compare (phone)")
    assert sideways(small) <= 0
    phone.close()

    assert not admin_requests, admin_requests
    assert not errors, errors
