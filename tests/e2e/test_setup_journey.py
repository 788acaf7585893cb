"""Issue 20's journey in real Chromium, never touching /admin/: the site
admin (as `make run`'s demo admin is) creates a project from the Multimodal
RewardBench preset, imports a small dataset, invites two annotators by one
link; they sign up through it and judge; the admin closes the contested
items as curator and cuts a release."""

import io
import json
import re
import zipfile

import pytest

from annotate.models import Membership, Project
from curation.models import Release, ReleaseStatus, Verdict
from tests.e2e.compare_helpers import log_in
from tests.factories import make_user, png_bytes

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

IDS = [f"pref_{n}" for n in range(1, 5)]
SPLIT = {"pref_2", "pref_4"}  # the second annotator dissents here: contested


def dataset(tmp_path):
    records = [
        {
            "ID": ext_id,
            "Text": f"Which caption fits image {ext_id}?",
            "Image": "images/0.png",
            "Output1": f"First answer to {ext_id}.",
            "Output2": f"Second answer to {ext_id}.",
            "Better": "Output1",
            "Category": "open_generation/preference_task",
        }
        for ext_id in IDS
    ]
    data = tmp_path / "items.json"
    data.write_text(json.dumps(records))
    images = tmp_path / "images.zip"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("images/0.png", png_bytes(size=(64, 48)))
    images.write_bytes(buffer.getvalue())
    return data, images


def login(page, base, username, password, next_url):
    log_in(page, base, username, next_url, password=password)


def judge_everything(page, *, dissent: bool) -> int:
    """Judge until the done page; pick the side showing Output1's text (or,
    dissenting, Output2's on the SPLIT items)."""
    page.get_by_role("button", name="Start annotating").click()
    judged = 0
    while True:
        page.wait_for_url(re.compile(r".*/(a/\d+|p/[\w-]+/work/done)/$"))
        if "/work/done/" in page.url:
            return judged
        page.wait_for_selector("#work[data-submitted='0']")
        left = page.locator(".response[data-side=left]").inner_text()
        ext_id = re.search(r"answer to (pref_\d+)", left).group(1)
        first_on_left = "First answer" in left
        want_first = not (dissent and ext_id in SPLIT)
        page.keyboard.press("1" if first_on_left == want_first else "2")
        url = page.url
        page.keyboard.press("Enter")
        page.wait_for_function("u => location.href !== u", arg=url)
        judged += 1


def test_a_team_starts_its_own_benchmark_without_django_admin(
    live_server, browser, artifacts, tmp_path
):
    base = live_server.url
    make_user("boss", is_superuser=True, is_staff=True)
    admin_requests: list[str] = []
    errors: list[str] = []

    def watch(page):
        page.on("request", lambda r: admin_requests.append(r.url) if "/admin/" in r.url else None)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        return page

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = watch(context.new_page())
    login(page, base, "boss", "pw", "/")

    # 1. A new project from the Multimodal RewardBench preset.
    page.get_by_role("link", name="New project").first.click()
    page.wait_for_url("**/projects/new/")
    page.fill("input[name=name]", "Caption preferences")
    page.fill("input[name=slug]", "captions")
    page.fill("textarea[name=guidelines]", "Prefer the caption that is **true of the image**.")
    page.wait_for_selector("#guidelines-preview strong")  # live preview, sanitised Markdown
    page.fill("input[name=votes_per_item]", "2")
    page.fill("input[name=escalation_votes]", "0")
    assert page.locator("select[name=preset]").input_value() == "mrb"
    page.screenshot(path=str(artifacts / "setup-new-project-1280x900.png"), full_page=True)
    page.get_by_role("button", name="Create project").click()
    page.wait_for_url("**/p/captions/")
    project = Project.objects.get(slug="captions")
    assert project.domains.count() == 6

    # 2. Import a small dataset.
    data, images = dataset(tmp_path)
    page.get_by_role("link", name="Import items").click()
    page.set_input_files("input[name=dataset]", str(data))
    page.set_input_files("input[name=images]", str(images))
    page.get_by_role("button", name="Import").click()
    page.wait_for_url("**/p/captions/")
    assert project.items.count() == len(IDS)

    # 3. One invitation link for two annotators.
    page.get_by_role("link", name="Members").click()
    page.wait_for_url("**/p/captions/members/")
    page.check("input[name=uses][value=many]")
    page.fill("input[name=max_uses]", "2")
    page.fill("input[name=note]", "annotators")
    page.get_by_role("button", name="Create invitation link").click()
    page.wait_for_selector("#new-invitation-link")
    link = page.input_value("#new-invitation-link")
    assert "/join/" in link
    page.screenshot(path=str(artifacts / "setup-members-1280x900.png"), full_page=True)

    # 4. They sign up through it and judge.
    for n, name in enumerate(["ana", "bo"]):
        newcomer = watch(browser.new_context(viewport={"width": 1280, "height": 900}).new_page())
        newcomer.goto(link)
        if n == 0:
            newcomer.screenshot(path=str(artifacts / "setup-join-1280x900.png"), full_page=True)
        newcomer.fill("input[name=username]", name)
        newcomer.fill("input[name=password1]", f"{name}-Secret-2026")
        newcomer.fill("input[name=password2]", f"{name}-Secret-2026")
        newcomer.get_by_role("button", name="Create account and join").click()
        newcomer.wait_for_url("**/p/captions/")
        assert judge_everything(newcomer, dissent=n == 1) == len(IDS)
        newcomer.context.close()
    assert set(
        Membership.objects.filter(project=project, role="annotator").values_list(
            "user__username", flat=True
        )
    ) == {"ana", "bo"}
    statuses = dict(
        Verdict.objects.filter(project=project).values_list("item__external_id", "status")
    )
    assert {i for i, s in statuses.items() if s == "contested"} == SPLIT

    # The members page now shows their figures.
    page.goto(f"{base}/p/captions/members/")
    rows = page.locator("#members tbody tr")
    assert rows.count() == 3
    ana = page.locator("#members tr", has_text="ana").inner_text()
    assert "50.0% (2/4)" in ana, ana  # bo dissents on two of the four
    page.screenshot(path=str(artifacts / "setup-members-judged-1280x900.png"), full_page=True)

    # 5. The admin closes the contested items (as curator) and cuts a release.
    page.goto(f"{base}/p/captions/curation/")
    for _ in SPLIT:
        page.locator("#queue a[href*='/curation/']").first.click()
        page.wait_for_selector("#decision")
        page.check("#decision input[name=action][value=resolve]")
        page.check("#decision input[name=choice][value='1']")
        page.fill("#decision textarea[name=reason]", "The first caption is true of the image.")
        page.get_by_role("button", name=re.compile("Save decision")).click()
        page.wait_for_selector(".messages .msg-success")
        page.goto(f"{base}/p/captions/curation/")
    assert not Verdict.objects.filter(project=project, status="contested").exists()
    page.goto(f"{base}/p/captions/releases/new/")
    page.get_by_role("button", name="Build release").click()
    page.wait_for_url("**/p/captions/releases/*/")
    page.wait_for_selector("h1 .status-ready", timeout=30_000)
    release = Release.objects.get(project=project)
    assert release.status == ReleaseStatus.READY

    # 6. Settings: the setup history lists what happened.
    page.goto(f"{base}/p/captions/settings/")
    history = page.locator("table").last.inner_text()
    for action in ("project_created", "invitation_created", "invitation_accepted"):
        assert action in history
    page.screenshot(path=str(artifacts / "setup-settings-1280x900.png"), full_page=True)

    page.get_by_role("link", name="Edit VQA").click()
    page.wait_for_url("**/p/captions/domains/vqa/")
    page.fill("input[name=correctness_question]", "Does it answer the question about the image?")
    page.screenshot(path=str(artifacts / "setup-domain-1280x900.png"), full_page=True)
    page.get_by_role("button", name="Save domain").click()
    page.wait_for_url("**/p/captions/settings/")
    assert project.domains.get(slug="vqa").correctness_question.startswith("Does it answer")

    # 7. Site admins create accounts in bulk from a CSV.
    page.get_by_role("link", name="Users").click()
    page.wait_for_url("**/users/new/")
    csv = tmp_path / "team.csv"
    csv.write_text("username,email,role\ncy,cy@example.org,curator\ndee,,annotator\n")
    page.set_input_files("input[name=file]", str(csv))
    page.select_option("select[name=project]", label="Caption preferences")
    page.get_by_role("button", name="Create users").click()
    page.wait_for_selector("#created-users")
    assert page.locator("#created-users tbody tr").count() == 2
    page.screenshot(path=str(artifacts / "setup-users-1280x900.png"), full_page=True)
    assert Membership.objects.get(project=project, user__username="cy").role == "curator"

    assert not admin_requests, admin_requests
    assert not errors, errors
