"""Curation pages: the permission matrix, filters, decisions through the
browser-facing views, audit log and CSV, constant query counts."""

import csv
import io

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotate.models import Item
from curation.models import AuditEvent, Verdict
from tests.curation.verdicts.test_decisions import contested_item
from tests.factories import make_item, make_member, make_project, make_user

pytestmark = pytest.mark.django_db


def curation_urls(project, item, domain_slug="general_preference"):
    return [
        ("get", reverse("curation_queue", args=[project.slug])),
        ("get", reverse("adjudicate", args=[project.slug, item.pk])),
        ("post", reverse("decide", args=[project.slug, item.pk])),
        ("get", reverse("accept_domain", args=[project.slug, domain_slug])),
        ("post", reverse("accept_domain", args=[project.slug, domain_slug])),
        ("get", reverse("audit_log", args=[project.slug])),
        ("get", reverse("agreement", args=[project.slug])),
        ("get", reverse("agreement_status", args=[project.slug])),
        ("post", reverse("agreement_refresh", args=[project.slug])),
        ("get", reverse("rule_settings", args=[project.slug])),
    ]


@pytest.mark.parametrize("role", ["anonymous", "outsider", "annotator", "curator", "admin"])
def test_permission_matrix_for_every_curation_url(client, role):
    project, item, _, _ = contested_item()
    if role == "outsider":
        client.force_login(make_user())
    elif role != "anonymous":
        client.force_login(make_member(project, role=role))
    for method, url in curation_urls(project, item):
        response = getattr(client, method)(url)
        code = response.status_code
        if role == "anonymous":
            assert code == 302 and "/accounts/login/" in response["Location"], url
        elif role == "outsider":
            assert code == 404, url
        elif role == "annotator":
            assert code == 403, url
        elif url.endswith("/rules/"):
            assert code == (200 if role == "admin" else 403), url
        else:
            assert code in (200, 204, 302, 400), (url, code)


def test_queue_filters_by_domain_reason_annotator_and_text(client):
    project, item, _, voters = contested_item()
    other_domain = project.domains.get(slug="vqa")
    stray = make_item(project, domain=other_domain, external_id="needle_42")
    Verdict.objects.create(item=stray, project=project, status="contested", contest_kind="problem")
    client.force_login(make_member(project, role="curator"))
    url = reverse("curation_queue", args=[project.slug])

    def ids(**params):
        page = client.get(url, params)
        assert page.status_code == 200
        return {v.item_id for v in page.context["page"].object_list}

    assert ids() == {item.pk, stray.pk}
    assert ids(domain="vqa") == {stray.pk}
    assert ids(kind="tie_majority") == {item.pk}
    assert ids(q="needle") == {stray.pk}
    pseudonym = voters[0].memberships.get().pseudonym or ""
    if pseudonym:
        assert ids(annotator=pseudonym) == {item.pk}
    counts = dict((k, n) for k, _, n in client.get(url).context["kinds"])
    assert counts["tie_majority"] == 1 and counts["problem"] == 1
    assert ids(status="all") >= {item.pk, stray.pk}


def test_queue_sorts_most_split_first(client):
    project = make_project()
    pref = project.domains.get(slug="general_preference")
    lopsided = make_item(
        project, domain=pref, votes_1=4, votes_2=1, votes_needed=5, live_assignments=5
    )
    even = make_item(
        project, domain=pref, votes_1=2, votes_2=2, votes_tie=1, votes_needed=5, live_assignments=5
    )
    for it in (lopsided, even):
        Verdict.objects.create(item=it, project=project, status="contested")
    client.force_login(make_member(project, role="curator"))
    page = client.get(reverse("curation_queue", args=[project.slug]), {"sort": "split"})
    assert [v.item_id for v in page.context["page"].object_list] == [even.pk, lopsided.pk]


def test_queue_and_adjudication_run_a_constant_number_of_queries(client):
    small_project, small_item, _, _ = contested_item()
    big_project, big_item, _, _ = contested_item(choices=("1", "2", "tie"))
    for _ in range(3):
        contested_item(project=big_project)
    curator = make_user()
    for p in (small_project, big_project):
        make_member(p, user=curator, role="curator")
    client.force_login(curator)
    for name, args in (
        ("curation_queue", lambda p, i: [p.slug]),
        ("adjudicate", lambda p, i: [p.slug, i.pk]),
        ("audit_log", lambda p, i: [p.slug]),
    ):
        counts = []
        for p, i in ((small_project, small_item), (big_project, big_item)):
            with CaptureQueriesContext(connection) as ctx:
                assert client.get(reverse(name, args=args(p, i))).status_code == 200
            counts.append(len(ctx.captured_queries))
        assert counts[0] == counts[1], name


def test_adjudication_shows_canonical_responses_model_names_votes_and_gold(client):
    project, item, _, _ = contested_item()
    Item.objects.filter(pk=item.pk).update(
        model_1="model-one", model_2="model-two", gold_choice="2"
    )
    client.force_login(make_member(project, role="curator"))
    html = client.get(reverse("adjudicate", args=[project.slug, item.pk])).content.decode()
    assert html.index("Response 1") < html.index("Response 2")
    assert "model-one" in html and "model-two" in html
    assert "Gold:" in html and html.count("<tr") >= 4  # header + three votes


def test_decide_view_resolves_and_moves_to_the_next_contested_item(client):
    project, item, v, _ = contested_item()
    _, second, _, _ = contested_item(project=project)
    client.force_login(make_member(project, role="curator"))
    response = client.post(
        reverse("decide", args=[project.slug, item.pk]),
        {"action": "resolve", "choice": "1", "reason": "clear", "version": v.version},
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("adjudicate", args=[project.slug, second.pk])
    assert Verdict.objects.get(item=item).status == "resolved"


def test_decide_view_reports_a_stale_page_with_409(client):
    project, item, v, _ = contested_item()
    client.force_login(make_member(project, role="curator"))
    url = reverse("decide", args=[project.slug, item.pk])
    client.post(url, {"action": "resolve", "choice": "1", "reason": "a", "version": v.version})
    response = client.post(
        url, {"action": "resolve", "choice": "2", "reason": "b", "version": v.version}
    )
    assert response.status_code == 409
    assert b"changed while you were looking" in response.content
    assert Verdict.objects.get(item=item).final_choice == "1"


def test_decide_view_refuses_a_curator_who_voted(client):
    project, item, v, voters = contested_item()
    from annotate.models import Membership

    Membership.objects.filter(user=voters[0], project=project).update(role="curator")
    client.force_login(voters[0])
    page = client.get(reverse("adjudicate", args=[project.slug, item.pk]))
    assert b"another curator must decide it" in page.content
    response = client.post(
        reverse("decide", args=[project.slug, item.pk]),
        {"action": "resolve", "choice": "1", "reason": "mine", "version": v.version},
    )
    assert response.status_code == 400
    assert Verdict.objects.get(item=item).status == "contested"


def test_bulk_accept_asks_for_confirmation_with_the_count(client):
    project = make_project(votes_per_item=1)
    pref = project.domains.get(slug="general_preference")
    for _ in range(3):
        it = make_item(project, domain=pref)
        Verdict.objects.create(
            item=it, project=project, status="agreed", final_choice="1", provenance="majority"
        )
    client.force_login(make_member(project, role="curator"))
    url = reverse("accept_domain", args=[project.slug, "general_preference"])
    page = client.get(url)
    assert b"Accept 3 agreed items" in page.content
    assert Verdict.objects.filter(status="resolved").count() == 0
    stale = client.post(url, {"expected": "2"})
    assert stale.status_code == 200 and Verdict.objects.filter(status="resolved").count() == 0
    done = client.post(url, {"expected": "3"})
    assert done.status_code == 302
    assert Verdict.objects.filter(status="resolved").count() == 3


def test_audit_log_filters_and_streams_csv(client):
    project, item, v, _ = contested_item()
    curator = make_member(project, role="curator")
    client.force_login(curator)
    client.post(
        reverse("decide", args=[project.slug, item.pk]),
        {"action": "exclude", "category": "ambiguous", "reason": "unclear", "version": v.version},
    )
    url = reverse("audit_log", args=[project.slug])
    page = client.get(url, {"action": "exclude"})
    assert [e.action for e in page.context["page"].object_list] == ["exclude"]
    assert len(client.get(url, {"actor": "rule"}).context["page"].object_list) == 1
    response = client.get(url, {"download": "csv"})
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0][:3] == ["when", "actor", "action"]
    assert {r[2] for r in rows[1:]} == {"rule", "exclude"}


def test_admin_change_to_an_item_is_audited_with_a_reason(client):
    project, item, _, _ = contested_item()
    admin = make_user(is_staff=True, is_superuser=True)
    client.force_login(admin)
    url = reverse("admin:annotate_item_change", args=[item.pk])
    form = client.get(url).context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None}
    data.update(
        project=project.pk,
        domain=item.domain_id,
        image=item.image_id,
        meta="{}",
        model_2="edited-model",
        gold_choice="",
        # The item's parts inline (issue 24), left as it is.
        **{"content_parts-TOTAL_FORMS": "0", "content_parts-INITIAL_FORMS": "0"},
    )
    missing_reason = client.post(url, data)
    assert missing_reason.status_code == 200  # form error: reason required
    data["audit_reason"] = "fix typo"
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    event = AuditEvent.objects.get(item=item, action="item_changed")
    assert event.actor == admin and event.reason == "fix typo"
    # (An edit of the content, part by part, is audited too:
    # tests/annotate/test_admin_item_parts.py.)
    assert event.after["model_2"] == "edited-model"
    assert "model_2" in event.before


def test_next_contested_moves_forward_wraps_round_and_skips_own_votes(client):
    from datetime import timedelta

    from django.utils import timezone

    project, a, _, _ = contested_item()
    _, b, _, _ = contested_item(project=project)
    _, c, _, voters_c = contested_item(project=project)
    _, d, _, _ = contested_item(project=project)
    base = timezone.now() - timedelta(hours=1)
    for n, item in enumerate((a, b, c, d)):
        Verdict.objects.filter(item=item).update(updated_at=base + timedelta(minutes=n))
    from annotate.models import Membership

    curator = voters_c[0]  # voted on c
    Membership.objects.filter(user=curator, project=project).update(role="curator")
    client.force_login(curator)

    def nxt(item):
        page = client.get(reverse("adjudicate", args=[project.slug, item.pk]))
        return page.context["next_item_id"]

    assert nxt(a) == b.pk
    assert nxt(b) == d.pk  # c skipped: the curator voted on it
    assert nxt(d) == a.pk  # wraps round


def test_queue_rows_show_the_picture_and_prompt_start_in_constant_queries(client, tmp_path):
    """Issue 31: rows name more than a bare ID; the picture of an MRB-shape
    item (its image) and of a parts item (its first prompt picture) come in
    a fixed number of queries whatever the page holds."""
    from annotate.models import ImageAsset, ItemPart

    project, item, _, _ = contested_item()
    curator = make_member(project, role="curator")
    client.force_login(curator)
    url = reverse("curation_queue", args=[project.slug])
    asset = ImageAsset.objects.create(
        sha256="a" * 64, file="images/a.png", format="PNG", width=8, height=6,
        size_bytes=10, thumbnail="thumbs/a.png",
    )  # fmt: skip
    from annotate.models import image_part, text_part, write_item_content

    write_item_content(
        item,
        [image_part(asset.pk), text_part("What colour is the big ball?")],
        [[text_part("red")], [text_part("blue")]],
    )
    with CaptureQueriesContext(connection) as one:
        html = client.get(url).content.decode()
    assert 'src="/media/thumbs/a.png"' in html
    assert "What colour is the big ball?" in html

    long_prompt = "Describe the chart. " * 30
    for _ in range(4):
        _, other, _, _ = contested_item(project=project)
        Item.objects.filter(pk=other.pk).update(prompt=long_prompt)
        ItemPart.objects.create(item=other, slot="prompt", position=5, kind="image", image=asset)
    with CaptureQueriesContext(connection) as five:
        html = client.get(url).content.decode()
    assert len(five.captured_queries) == len(one.captured_queries)
    assert html.count('class="thumb"') == 5
    assert html.count(long_prompt[:100]) == 4 and long_prompt not in html  # shortened
