"""Issue 19, deliverable 6: axe-core finds no violation on any page of any
role (anonymous, annotator, curator, admin), at 1280x800 and on a 390x844
touch screen, including the compare page's states (fresh, rejected with
errors, judged, panels open) and the history. Django's own admin and the
vendored Swagger UI page are not ours to fix and are left out."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotate.loop.service import Vote, claim_next_item, submit_judgement
from annotate.models import Membership
from annotate.setup.team import create_invitation
from curation.evaluation.judge_runs import save_endpoint, start_judge_run
from curation.models import Release, Verdict
from curation.releases.build import build_release
from curation.releases.service import create_release
from tests.curation.releases.test_releases import ALL_DOMAINS, make_release_project
from tests.e2e.compare_helpers import import_items, log_in
from tests.factories import make_project, make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# axe-core's WCAG 2.0, 2.1 and 2.2 A and AA rules and its best practices.
AXE_OPTIONS = {
    "resultTypes": ["violations"],
    "runOnly": {
        "type": "tag",
        "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"],
    },
}
SIZES = {
    "desktop": {"viewport": {"width": 1280, "height": 800}},
    "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True},
}


@pytest.fixture
def site(tmp_path):
    """Every kind of page with something on it."""
    project = make_release_project(tmp_path, slug="axe")
    admin = make_user("adm")
    Membership.objects.create(project=project, user=admin, role="admin")
    curator = make_user("cur")
    Membership.objects.create(project=project, user=curator, role="curator")
    annotator = make_user("ann")
    Membership.objects.create(project=project, user=annotator, role="annotator")

    def release(version):
        return build_release(
            release_id=create_release(
                project=project, version=version, notes="Notes *here*.", domains=ALL_DOMAINS,
                seed=3, user=curator, enqueue=False,
            ).pk
        )  # fmt: skip

    v1, v2 = release("v1.0"), release("v1.1")
    # A failed build and a stalled one (its worker died): both offer Retry (issue 29).
    failed, stalled = (
        create_release(
            project=project, version=version, notes="", domains=ALL_DOMAINS, seed=3,
            user=curator, enqueue=False,
        )
        for version in ("v0.8", "v0.9")
    )  # fmt: skip
    Release.objects.filter(pk=failed.pk).update(
        status="failed", error="OSError: No space left on device (all_data.json)"
    )
    Release.objects.filter(pk=stalled.pk).update(
        status="building",
        started_at=timezone.now() - timedelta(minutes=6),
        heartbeat_at=timezone.now() - timedelta(minutes=5),
        progress_total=19,
        progress_done=7,
    )
    endpoint = save_endpoint(
        project=project, actor=admin, name="local", base_url="http://127.0.0.1:9/v1",
        model="judge", temperature=0.0, max_tokens=64, timeout_seconds=5, api_key="k",
    )  # fmt: skip
    run = start_judge_run(
        release=v2, endpoint=endpoint, name="run", swapped=False, concurrency=1,
        user=admin, enqueue=False,
    )  # fmt: skip
    contested = Verdict.objects.filter(project=project, status="contested").first()
    item_id = contested.item_id if contested else Verdict.objects.filter(project=project)[0].item_id

    # The annotator's own project: a correctness item to judge, one judged.
    work = make_project(slug="work", votes_per_item=3)
    import_items(tmp_path, work, ["vqa", "safety", "general_preference"])
    Membership.objects.create(project=work, user=annotator, role="annotator")
    judged = claim_next_item(project=work, annotator=annotator)
    submit_judgement(
        assignment_id=judged.pk,
        annotator=annotator,
        vote=Vote(choice="1", correct_1="yes", correct_2="no", rationale="clear", confidence=2)
        if judged.item.domain.is_correctness
        else Vote(choice="1", rationale="clear"),
    )
    fresh = claim_next_item(project=work, annotator=annotator)
    p, w = project.slug, work.slug
    # An MMRB2 release, re-keyed: its task-file table and ID map link (issue 24).
    from tests.curation.releases.test_release_mmrb2_votes import graded_project

    mm = graded_project(tmp_path / "mmrb2")
    Membership.objects.create(project=mm, user=curator, role="curator")
    mm_release = build_release(
        release_id=create_release(
            project=mm, version="v1", notes="", domains=list(
                mm.domains.filter(slug__startswith="mmrb2-").values_list("slug", flat=True)
            ), seed=1, user=curator, enqueue=False, rekey=True,
        ).pk
    )  # fmt: skip
    invitation = create_invitation(actor=admin, project=project)
    make_user("site", is_superuser=True, is_staff=True)  # "site admin" below
    domain = project.domains.order_by("position").first()
    return {
        "anonymous": [
            reverse("login"),
            reverse("password_reset"),
            invitation.path,  # the sign-up page an invitation link opens
        ],
        "annotator": [
            reverse("home"),
            reverse("project", args=[w]),
            reverse("work_item", args=[fresh.pk]),
            reverse("work_item", args=[fresh.pk]) + "#errors",
            reverse("work_item", args=[fresh.pk]) + "#keys",
            reverse("work_item", args=[fresh.pk]) + "#guidelines",
            reverse("work_item", args=[judged.pk]),
            reverse("history", args=[w]),
            reverse("work_done", args=[p]),
            reverse("api_token"),
            # Not /api/docs/: the whole page is the vendored Swagger UI, whose
            # own markup fails axe (nested buttons, contrast of its method
            # badges, target size); see docs/decisions.md.
        ],
        "curator": [
            reverse("project", args=[p]),
            reverse("curation_queue", args=[p]),
            reverse("item_grid", args=[p]),
            reverse("item_grid", args=[p]) + "?status=agreed&votes_min=x",
            reverse("adjudicate", args=[p, item_id]),
            reverse("agreement", args=[p]),
            reverse("audit_log", args=[p]),
            reverse("releases", args=[p]),
            reverse("release_new", args=[p]),
            reverse("release_detail", args=[p, failed.pk]),  # Retry (issue 29)
            reverse("release_detail", args=[p, stalled.pk]),
            reverse("release_detail", args=[p, v2.pk]),
            reverse("release_detail", args=[mm.slug, mm_release.pk]),
            reverse("agreement", args=[mm.slug]),  # the graded table, its intervals (issue 30)
            reverse("release_diff", args=[p, v2.pk]) + f"?against={v1.pk}",
            reverse("leaderboard", args=[p, v2.pk]),
            reverse("judge_run", args=[p, run.pk]),
            reverse("curation_queue", args=[p]) + "?status=stuck",
            reverse("label_quality", args=[p]),
            reverse("item_models", args=[p, item_id]),
        ],
        "admin": [
            reverse("project", args=[p]),
            reverse("import", args=[p]),
            reverse("rule_settings", args=[p]),
            reverse("judge_endpoints", args=[p]),
            reverse("judge_endpoint_edit", args=[p, endpoint.pk]),
            reverse("judge_run_new", args=[p, v2.pk]),
            reverse("project_settings", args=[p]),
            reverse("domain_new", args=[p]),
            reverse("domain_edit", args=[p, domain.slug]),
            reverse("members", args=[p]),
            reverse("password_change"),
        ],
        "site admin": [
            reverse("project_new"),
            reverse("users_bulk"),
        ],
    }


USERS = {"annotator": "ann", "curator": "cur", "admin": "adm", "site admin": "site"}


def prepare(page, url: str) -> None:
    """Put the compare page in the state the URL's fragment names."""
    if not page.locator("#work").count():
        return
    page.wait_for_function("() => window.htmx && document.readyState === 'complete'")
    state = url.rpartition("#")[2] if "#" in url else ""
    if state == "errors":
        page.locator("#judge-form button[type=submit]").click()
        page.wait_for_selector("#error-summary")
    elif state in ("keys", "guidelines"):
        button = page.locator(f".head-actions [data-action={state}]")
        if not button.is_visible():
            assert state == "keys"  # no key list on a touch screen
            return
        button.click()
        page.wait_for_selector(f"#{state}:not([hidden])")


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("role", ["anonymous", "annotator", "curator", "admin", "site admin"])
def test_every_page_has_no_axe_violations(live_server, browser, site, role, size, artifacts):
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    context = browser.new_context(**SIZES[size])
    page = context.new_page()
    if role != "anonymous":
        log_in(page, live_server.url, USERS[role], "/")
    found = []
    for url in site[role]:
        response = page.goto(live_server.url + url.partition("#")[0])
        assert response.status == (400 if "=x" in url else 200), url
        prepare(page, url)
        results = axe.run(page, options=AXE_OPTIONS)
        if results.violations_count:
            found.append(f"{url}\n{results.generate_report()}")
        if role == "annotator" and "#" not in url and "/a/" in url:
            page.screenshot(path=str(artifacts / f"axe-{size}-compare.png"), full_page=True)
    context.close()
    assert not found, "\n\n".join(found)
