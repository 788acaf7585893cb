"""The agreement dashboard: access, figures cross-checked, CSV, background refresh."""

import csv
import io
import random

import krippendorff
import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse

from annotate.loop import rules
from annotate.loop.service import Vote, claim_next_item, submit_judgement
from annotate.models import Judgement
from curation.agreement import reports
from curation.agreement import stats as agreement
from curation.models import AgreementCache
from tests.factories import make_item, make_member, make_project, make_user

pytestmark = pytest.mark.django_db


def voted_project(n_items=12, n_annotators=4, seed=3):
    rng = random.Random(seed)
    project = make_project(votes_per_item=3, escalation_votes=0)
    pref = project.domains.get(slug="general_preference")
    vqa = project.domains.get(slug="vqa")
    for i in range(n_items):
        make_item(project, domain=pref if i % 2 else vqa)
    annotators = [make_member(project, pseudonym=f"A{i}") for i in range(n_annotators)]
    for user in annotators:
        while (a := claim_next_item(project=project, annotator=user)) is not None:
            choice = rng.choice(["1", "1", "2", "tie"])
            kwargs = {"rationale": "x"} if choice == "tie" else {}
            if a.item.domain_id == vqa.pk:
                kwargs.update(correct_1=rng.choice(["yes", "no", "unsure"]), correct_2="yes")
            submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice=choice, **kwargs))
    return project


def reference_alpha(project, domain_slug=None):
    """Krippendorff's alpha from a reliability matrix built straight from the
    judgement rows (annotators x items), independent of curation's code."""
    rows = Judgement.objects.filter(assignment__item__project=project, is_current=True)
    if domain_slug:
        rows = rows.filter(assignment__item__domain__slug=domain_slug)
    rows = list(rows.values_list("assignment__annotator_id", "assignment__item_id", "choice"))
    raters = sorted({r for r, _, _ in rows})
    items = sorted({i for _, i, _ in rows})
    data = np.full((len(raters), len(items)), np.nan)
    code = {"1": 0.0, "2": 1.0, "tie": 2.0}
    for r, i, c in rows:
        data[raters.index(r), items.index(i)] = code[c]
    return krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")


def test_domain_alpha_matches_krippendorff_on_an_independent_matrix():
    project = voted_project()
    report = reports.build_report(project)
    rows = {r.key: r for r in report.domains}
    for slug in ("general_preference", "vqa"):
        assert rows[slug].summary.choice.alpha == pytest.approx(
            reference_alpha(project, slug), abs=1e-9
        )
    assert rows["all"].summary.choice.alpha == pytest.approx(reference_alpha(project), abs=1e-9)


def test_tally_based_point_estimates_equal_the_per_vote_computation():
    project = voted_project()
    report = reports.build_report(project)
    votes, _ = reports.project_votes(project)
    direct = agreement.summarise(votes)
    total = report.domains[-1].summary
    for a, b in (
        (total.choice.alpha, direct.choice.alpha),
        (total.choice.ac1, direct.choice.ac1),
        (total.choice.pairwise_agreement, direct.choice.pairwise_agreement),
        (total.tie_rate, direct.tie_rate),
        (total.correctness.alpha, direct.correctness.alpha),
    ):
        assert a == pytest.approx(b, abs=1e-12)


@pytest.mark.parametrize(
    ("role", "status"), [("annotator", 403), ("curator", 200), ("admin", 200), (None, 404)]
)
def test_dashboard_is_for_curators_and_admins(client, role, status):
    project = voted_project(n_items=2, n_annotators=3)
    user = make_member(project, role=role) if role else make_user()
    client.force_login(user)
    for name, method in (
        ("agreement", "get"),
        ("agreement_status", "get"),
        ("agreement_refresh", "post"),
    ):
        response = getattr(client, method)(reverse(name, args=[project.slug]))
        expected = 302 if (status == 200 and method == "post") else status
        if name == "agreement_status" and status == 200:
            expected = 204
        assert response.status_code == expected, (name, role)


def test_dashboard_shows_undefined_with_no_votes(client):
    project = make_project()
    client.force_login(make_member(project, role="curator"))
    response = client.get(reverse("agreement", args=[project.slug]))
    assert response.status_code == 200
    assert b"undefined" in response.content and b"No votes yet" in response.content


def test_refresh_fills_the_cache_once_and_the_page_shows_it(
    client, django_capture_on_commit_callbacks
):
    project = voted_project()
    client.force_login(make_member(project, role="curator"))
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = client.post(reverse("agreement_refresh", args=[project.slug]))
    assert len(callbacks) == 1
    assert response.status_code == 302
    cache = AgreementCache.objects.get(project=project)
    assert cache.computed_at is not None and cache.requested_at is None  # eager task ran
    assert cache.payload["n_resamples"] == reports.BOOTSTRAP_RESAMPLES
    low_high = cache.payload["ci"]["all"]["choice"]
    assert low_high["low"] <= reports.build_report(project).domains[-1].summary.choice.alpha
    page = client.get(reverse("agreement", args=[project.slug]))
    assert b"computed" in page.content and b"bootstrap resamples" in page.content
    status = client.get(reverse("agreement_status", args=[project.slug]))
    assert status.status_code == 204 and status["HX-Refresh"] == "true"


def test_a_pending_refresh_is_not_queued_twice():
    from curation.agreement.reports import request_agreement_refresh

    project = voted_project(n_items=2, n_annotators=3)
    AgreementCache.objects.create(project=project)
    AgreementCache.objects.filter(project=project).update(requested_at="2100-01-01T00:00Z")
    assert request_agreement_refresh(project=project) is False


def test_csv_downloads_have_one_row_per_domain_and_annotator(client):
    project = voted_project()
    client.force_login(make_member(project, role="curator"))
    url = reverse("agreement", args=[project.slug])
    domains = list(csv.reader(io.StringIO(client.get(url + "?download=domains").content.decode())))
    assert domains[0] == reports.DOMAIN_COLUMNS
    assert len(domains) == 1 + 6 + 1  # header, six domains, all
    annotators = client.get(url + "?download=annotators")
    assert annotators["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(annotators.content.decode())))
    voters = Judgement.objects.filter(assignment__item__project=project)
    n_voters = voters.values("assignment__annotator").distinct().count()
    assert rows[0] == reports.ANNOTATOR_COLUMNS and len(rows) == 1 + n_voters


def test_left_biased_annotator_is_flagged_on_the_dashboard(client):
    project = make_project(votes_per_item=1)
    for _ in range(60):
        make_item(project, domain=project.domains.get(slug="general_preference"))
    biased = make_member(project, pseudonym="LEFTY")
    while (a := claim_next_item(project=project, annotator=biased)) is not None:
        submit_judgement(
            assignment_id=a.pk,
            annotator=biased,
            vote=Vote(choice=rules.response_on("left", swapped=a.shown_swapped)),
        )
    client.force_login(make_member(project, role="curator"))
    page = client.get(reverse("agreement", args=[project.slug])).content.decode()
    assert "LEFTY" in page and "side bias" in page


def test_dashboard_runs_a_constant_number_of_queries(client, django_assert_num_queries):
    small = voted_project(n_items=4, n_annotators=3, seed=1)
    big = voted_project(n_items=20, n_annotators=5, seed=2)
    curator = make_user()
    for p in (small, big):
        make_member(p, user=curator, role="curator")
    client.force_login(curator)
    counts = []
    for p in (small, big):
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as ctx:
            assert client.get(reverse("agreement", args=[p.slug])).status_code == 200
        counts.append(len(ctx.captured_queries))
    assert counts[0] == counts[1]


def test_agreement_command_prints_the_tables(capsys):
    project = voted_project()
    call_command("agreement", project.slug, "--bootstrap")
    out = capsys.readouterr().out
    assert "All domains" in out and "computed" in out and "A0" in out
    call_command("agreement", project.slug, "--csv", "domains")
    assert capsys.readouterr().out.startswith(",".join(reports.DOMAIN_COLUMNS))
