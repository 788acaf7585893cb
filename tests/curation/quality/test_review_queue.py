"""The suspected-errors queue: ranking, confirm (provenance reviewed) and
overturn (the usual audited decision), conflict of interest, queries."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from curation.models import AuditEvent, ItemQuality, LabelQualityRun, Verdict
from curation.quality.service import compute_label_quality, request_label_quality
from tests.curation.quality.conftest import needs_quality_extra
from tests.curation.quality.test_label_quality_job import PLANTED, make_world
from tests.factories import make_assignment, make_judgement, make_member, make_user

pytestmark = [
    pytest.mark.django_db,
    needs_quality_extra,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]


@pytest.fixture
def world():
    project, entries, items, _team = make_world()
    request_label_quality(project=project, evaluations=[e.pk for e in entries])
    compute_label_quality(project_id=project.pk)
    curator = make_member(project, role="curator")
    return project, items, curator


def test_queue_lists_the_planted_items_first(client, world):
    project, items, curator = world
    client.force_login(curator)
    page = client.get(reverse("label_quality", args=[project.slug]))
    assert page.status_code == 200
    rows = list(page.context["page"].object_list)
    assert {r.item_id for r in rows[:3]} == {items[n].pk for n in PLANTED}
    assert b"Computed" in page.content and b"judge-0" in page.content


def test_confirm_marks_the_label_reviewed_audits_it_and_moves_on(client, world):
    project, _items, curator = world
    client.force_login(curator)
    first = client.get(reverse("label_quality", args=[project.slug])).context["first"]
    verdict = Verdict.objects.get(item_id=first)
    side = verdict.final_choice
    response = client.post(
        reverse("label_quality_decide", args=[project.slug, first]),
        {"action": "confirm", "reason": "", "version": verdict.version},
    )
    assert response.status_code == 302
    verdict.refresh_from_db()
    assert (verdict.status, verdict.provenance, verdict.final_choice) == (
        "resolved",
        "reviewed",
        side,
    )
    event = AuditEvent.objects.get(item_id=first, action="confirm")
    assert event.actor == curator and event.before["provenance"] == "majority"
    queue = client.get(reverse("label_quality", args=[project.slug])).context["page"]
    assert first not in {r.item_id for r in queue.object_list}
    assert response["Location"] == reverse(
        "label_quality_review", args=[project.slug, queue.object_list[0].item_id]
    )


def test_overturn_needs_a_reason_and_flips_the_side_with_an_audit(client, world):
    project, items, curator = world
    client.force_login(curator)
    target = items[PLANTED[0]]
    verdict = Verdict.objects.get(item=target)
    before = verdict.final_choice
    url = reverse("label_quality_decide", args=[project.slug, target.pk])
    refused = client.post(url, {"action": "overturn", "reason": "", "version": verdict.version})
    assert refused.status_code == 400
    verdict.refresh_from_db()
    assert verdict.final_choice == before
    ok = client.post(
        url,
        {"action": "overturn", "reason": "both judges, both orders", "version": verdict.version},
    )
    assert ok.status_code == 302
    verdict.refresh_from_db()
    assert verdict.final_choice != before and verdict.provenance == "adjudicated"
    assert AuditEvent.objects.filter(item=target, action="resolve").exists()


def test_a_stale_page_changes_nothing(client, world):
    project, items, curator = world
    client.force_login(curator)
    target = items[PLANTED[1]]
    verdict = Verdict.objects.get(item=target)
    url = reverse("label_quality_decide", args=[project.slug, target.pk])
    response = client.post(url, {"action": "confirm", "version": verdict.version + 1})
    assert response.status_code == 409
    verdict.refresh_from_db()
    assert verdict.provenance == "majority"


def test_a_curator_who_voted_cannot_decide(client, world):
    project, items, curator = world
    target = items[PLANTED[2]]
    make_judgement(make_assignment(target, curator), "1")
    client.force_login(curator)
    verdict = Verdict.objects.get(item=target)
    page = client.get(reverse("label_quality_review", args=[project.slug, target.pk]))
    assert page.context["conflict"]
    response = client.post(
        reverse("label_quality_decide", args=[project.slug, target.pk]),
        {"action": "confirm", "version": verdict.version},
    )
    assert response.status_code == 400
    verdict.refresh_from_db()
    assert verdict.provenance == "majority"


def test_queue_page_runs_constant_queries(client, world):
    project, _items, curator = world
    client.force_login(curator)
    url = reverse("label_quality", args=[project.slug])
    with CaptureQueriesContext(connection) as few:
        client.get(url, {"domain": "knowledge"})  # empty page
    with CaptureQueriesContext(connection) as many:
        client.get(url)
    assert len(many) <= len(few) + 1  # + the first page's rows


def test_page_says_when_the_extra_is_missing(client, world, monkeypatch):
    from curation.quality import views

    project, _items, curator = world
    monkeypatch.setattr(views, "libraries_available", lambda: False)
    client.force_login(curator)
    page = client.get(reverse("label_quality", args=[project.slug]))
    assert b"pip install -e" in page.content and b"quality" in page.content


@pytest.mark.parametrize(
    ("role", "status"), [("annotator", 403), ("curator", 200), ("admin", 200), (None, 404)]
)
def test_queue_permissions(client, world, role, status):
    project, items, _ = world
    user = make_member(project, role=role) if role else make_user()
    client.force_login(user)
    assert client.get(reverse("label_quality", args=[project.slug])).status_code == status
    review = reverse("label_quality_review", args=[project.slug, items[0].pk])
    assert client.get(review).status_code == status
    assert LabelQualityRun.objects.filter(project=project).exists()
    assert ItemQuality.objects.filter(project=project).count() == 40


def test_annotator_table_shows_crowdlab_quality_beside_kappa(client, world):
    project, _items, curator = world
    client.force_login(curator)
    page = client.get(reverse("agreement", args=[project.slug]))
    assert b"CROWDLAB quality" in page.content
    stored = LabelQualityRun.objects.get(project=project).payload["annotators"]
    rows = page.context["report"].annotators
    assert rows and all(r.crowdlab_quality == stored[str(r.annotator_id)]["quality"] for r in rows)


def test_status_poll_answers_while_computing_and_reloads_when_done(client, world):
    from curation.models import LabelQualityStatus

    project, _items, curator = world
    client.force_login(curator)
    url = reverse("label_quality_status", args=[project.slug])
    LabelQualityRun.objects.filter(project=project).update(status=LabelQualityStatus.RUNNING)
    page = client.get(reverse("label_quality", args=[project.slug]))
    assert url.encode() in page.content  # the page polls while it computes
    busy = client.get(url)
    assert busy.status_code == 200 and b"Computing" in busy.content
    LabelQualityRun.objects.filter(project=project).update(status=LabelQualityStatus.READY)
    done = client.get(url)
    assert done.status_code == 204 and done["HX-Refresh"] == "true"
