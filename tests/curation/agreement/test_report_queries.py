"""The dashboard's count matrices from aggregate queries, and reproducible
bootstrap intervals (see bench/agreement_bench.py for the timings)."""

import random

import krippendorff
import numpy as np
import pytest

from annotate.loop.service import Vote, claim_next_item, revise_judgement, submit_judgement
from annotate.models import Domain, Item, Judgement
from curation.agreement import reports
from curation.agreement import stats as agreement
from tests.factories import make_item, make_member, make_project

pytestmark = pytest.mark.django_db


def voted_project(seed=5):
    """Items in a preference and two correctness domains, 3 votes each, and
    one item with no vote yet."""
    rng = random.Random(seed)
    project = make_project(votes_per_item=3, escalation_votes=0)
    domains = [project.domains.get(slug=s) for s in ("general_preference", "vqa", "knowledge")]
    for i in range(15):
        make_item(project, domain=domains[i % 3])
    annotators = [make_member(project, pseudonym=f"A{i}") for i in range(4)]
    for user in annotators:
        while (a := claim_next_item(project=project, annotator=user)) is not None:
            choice = rng.choice(["1", "1", "2", "tie"])
            kwargs = {"rationale": "x"} if choice == "tie" else {}
            if a.item.domain.is_correctness:
                kwargs.update(
                    correct_1=rng.choice(["yes", "no", "unsure"]),
                    correct_2=rng.choice(["yes", "no"]),
                )
            submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice=choice, **kwargs))
    make_item(project, domain=domains[1])  # unvoted: a unit with no values
    return project


def test_count_matrices_give_the_per_vote_statistics_in_every_domain():
    project = voted_project()
    votes, domain_of = reports.project_votes(project)
    grouped = reports.by_domain(votes, domain_of)
    matrices = reports.domain_count_matrices(project)
    assert set(matrices) == set(
        Item.objects.filter(project=project).values_list("domain", flat=True)
    )
    for domain_id, (choice, labels) in matrices.items():
        vs = grouped[domain_id]
        assert _same(choice, agreement.choice_matrix(vs)[1])
        assert _same(labels, agreement.correctness_matrix(vs)[1])
    report_rows = {r.key: r.summary for r in reports.build_report(project).domains}
    for domain in project.domains.all():
        if domain.pk in matrices:
            expected = reports.summary_from_counts(*matrices[domain.pk])
            got = report_rows[domain.slug]
            assert_same_summary(got, expected)


def assert_same_summary(got: agreement.Summary, expected: agreement.Summary) -> None:
    """Equal to 1e-9 where numbers, the same reason where undefined."""
    for name in ("choice", "correctness"):
        g, e = getattr(got, name), getattr(expected, name)
        for stat in ("alpha", "ac1", "pairwise_agreement"):
            value = getattr(e, stat)
            if isinstance(value, agreement.Undefined):
                assert getattr(g, stat) == value, (name, stat)
            else:
                assert getattr(g, stat) == pytest.approx(value, abs=1e-9), (name, stat)
        assert (g.n_units, g.n_values, g.n_pairable) == (e.n_units, e.n_values, e.n_pairable)
        assert g.rates == pytest.approx(e.rates) if e.n_values else g.rates == e.rates


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """The same multiset of non-empty unit rows (statistics ignore row order)."""

    def rows(m):
        return sorted(map(tuple, np.asarray(m)[np.asarray(m).sum(axis=1) > 0].tolist()))

    return rows(a) == rows(b)


CODES = {"1": 0.0, "2": 1.0, "tie": 2.0, "yes": 0.0, "no": 1.0, "unsure": 2.0}


def reliability_data(project, domain_id=None, *, labels=False) -> np.ndarray:
    """Annotators x units (NaN = no value) straight from the current judgement
    rows, without curation's code: units are items, or (item, response) for
    correctness labels."""
    rows = Judgement.objects.with_pair_answers().filter(
        assignment__item__project=project, is_current=True
    )
    if domain_id is not None:
        rows = rows.filter(assignment__item__domain_id=domain_id)
    values = []
    for annotator, item, choice, c1, c2 in rows.values_list(
        "assignment__annotator_id", "assignment__item_id", "choice", "correct_1", "correct_2"
    ):
        if not labels:
            values.append((annotator, item, choice))
        else:
            values += [(annotator, (item, r), v) for r, v in (("1", c1), ("2", c2)) if v]
    raters = sorted({r for r, _, _ in values})
    units = sorted({u for _, u, _ in values})
    data = np.full((len(raters), len(units)), np.nan)
    for r, u, v in values:
        data[raters.index(r), units.index(u)] = CODES[v]
    return data


CODE_VALUES = [0.0, 1.0, 2.0]


def package_alpha(data: np.ndarray) -> float:
    return krippendorff.alpha(data, level_of_measurement="nominal", value_domain=CODE_VALUES)


def with_revisions(project):
    """Two more items half voted, then those votes revised (choice and labels)."""
    vqa = project.domains.get(slug="vqa")
    voters = [make_member(project) for _ in range(2)]
    for _ in range(2):
        make_item(project, domain=vqa)
    for user in voters:
        a = claim_next_item(project=project, annotator=user)
        first = Vote(choice="1", correct_1="yes", correct_2="no")
        submit_judgement(assignment_id=a.pk, annotator=user, vote=first)
        second = Vote(choice="2", correct_1="unsure", correct_2="yes")
        revise_judgement(assignment_id=a.pk, annotator=user, vote=second)
    return project


def test_point_estimates_equal_krippendorff_on_independent_matrices():
    project = with_revisions(voted_project(seed=11))
    summaries = reports.domain_summaries(project)
    report = {r.key: r.summary for r in reports.build_report(project).domains}
    slugs = dict(Domain.objects.filter(project=project).values_list("pk", "slug"))
    assert set(summaries) == {
        reports.ALL,
        *Item.objects.filter(project=project).values_list("domain_id", flat=True),
    }
    for key, summary in summaries.items():
        domain_id = None if key == reports.ALL else key
        shown = report[reports.ALL if domain_id is None else slugs[key]]
        expected = package_alpha(reliability_data(project, domain_id))
        assert summary.choice.alpha == pytest.approx(expected, abs=1e-9)
        assert shown.choice.alpha == pytest.approx(expected, abs=1e-9)
        if domain_id is not None and slugs[key] == "general_preference":
            assert isinstance(summary.correctness.alpha, agreement.Undefined)
            continue
        expected = package_alpha(reliability_data(project, domain_id, labels=True))
        assert summary.correctness.alpha == pytest.approx(expected, abs=1e-9)
        assert shown.correctness.alpha == pytest.approx(expected, abs=1e-9)
        # The other statistics: as the per-vote computation gives them.
        votes, domain_of = reports.project_votes(project)
        if domain_id is not None:
            votes = reports.by_domain(votes, domain_of)[domain_id]
        assert_same_summary(summary, agreement.summarise(votes))


def test_point_estimates_take_one_query_whatever_the_size(django_assert_num_queries):
    project = voted_project(seed=2)
    with django_assert_num_queries(1):
        small = reports.domain_summaries(project)
    with_revisions(project)
    for _ in range(30):
        make_item(project, domain=project.domains.get(slug="knowledge"))
    user = make_member(project)
    while (a := claim_next_item(project=project, annotator=user)) is not None:
        vote = Vote(choice="2", correct_1="no", correct_2="yes")
        submit_judgement(assignment_id=a.pk, annotator=user, vote=vote)
    with django_assert_num_queries(1):
        large = reports.domain_summaries(project)
    assert large[reports.ALL].choice.n_values > small[reports.ALL].choice.n_values


def test_choice_matrix_keeps_units_without_votes():
    project = voted_project()
    vqa = project.domains.get(slug="vqa")
    choice, _ = reports.domain_count_matrices(project)[vqa.pk]
    assert len(choice) == Item.objects.filter(domain=vqa).count()
    assert (choice.sum(axis=1) == 0).sum() == 1


def test_bootstrap_intervals_do_not_depend_on_the_order_votes_come_in(monkeypatch):
    project = voted_project()
    first = reports.compute_expensive(project)
    real = reports.project_votes

    def shuffled(p):
        votes, domain_of = real(p)
        random.Random(1).shuffle(votes)
        return votes, domain_of

    monkeypatch.setattr(reports, "project_votes", shuffled)
    assert reports.compute_expensive(project) == first
