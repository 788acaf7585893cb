"""A benchmark that decides its own judge calls (judge_calls) makes the
"swapped" option meaningless: the judge run form says what will be sent
instead (its judge_calls_help), and a run's page and the leaderboard never
claim "both orders" for such a run. Benchmarks without judge_calls keep
saying "both orders" / "original order only"."""

from __future__ import annotations

import html
import re

import pytest
from django.urls import reverse

from curation.benchmarks import registry
from curation.benchmarks.ranked.benchmark import BENCHMARK as RANKED
from curation.benchmarks.vlrb.benchmark import BENCHMARK as VLRB
from curation.evaluation.judge_calls import sends
from curation.evaluation.judge_runs import start_judge_run
from tests.curation.benchmarks.vlrb.test_vlrb_end_to_end import release_of, vlrb_project  # noqa: F401
from tests.curation.evaluation.fake_openai import FakeJudge
from tests.curation.evaluation.test_judge_runner import API_KEY, MODEL, make_endpoint
from tests.curation.releases.test_releases import built, make_release_project
from tests.factories import make_member

pytestmark = pytest.mark.django_db
VLRB_SENDS = "10 calls per pair, each shown in an order (swapped or not) drawn from the run's seed"


def page_text(response) -> str:
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def test_each_benchmark_deciding_its_calls_says_what_it_sends():
    deciding = registry.offering("judge_calls")
    assert {b.key for b in deciding} >= {"vlrb", "ranked"}
    for b in deciding:
        assert b.judge_calls_help and "order" in b.judge_calls_help
        assert sends(b, True) == sends(b, False) == b.judge_calls_help
    assert sends(VLRB, True) == VLRB_SENDS
    assert "one N-way call per prompt" in sends(RANKED, False)
    plain = [b for b in registry.all_benchmarks() if not hasattr(b, "judge_calls")]
    assert plain, "some benchmark keeps the two passes"
    assert sends(plain[0], True) == "both orders"
    assert sends(plain[0], False) == "original order only"


def test_the_form_and_the_run_page_say_what_a_vlrb_run_sends(vlrb_project, client):  # noqa: F811
    project, _ = vlrb_project
    release, _ = release_of(project)
    curator = make_member(project, role="curator")
    client.force_login(curator)
    with FakeJudge(api_key=API_KEY, model=MODEL, records=[]) as fake:
        endpoint = make_endpoint(release, fake)
    form = page_text(client.get(reverse("judge_run_new", args=[project.slug, release.pk])))
    assert f"With {VLRB.judge_label}: {VLRB_SENDS} (the swapped option is ignored)." in form
    # The swapped option's help names each benchmark that ignores it, and what it sends.
    assert f"{RANKED.judge_label}: {RANKED.judge_calls_help}" in form
    board = page_text(client.get(reverse("leaderboard", args=[project.slug, release.pk])))
    assert "(the swapped option is ignored)" in board

    # Even with the option ticked, the run's page and the leaderboard say what was sent.
    run = start_judge_run(
        release=release, endpoint=endpoint, name="judge-k", swapped=True, concurrency=1,
        user=curator, enqueue=False, scoring="vlrb",
    )  # fmt: skip
    assert run.sends == VLRB_SENDS
    detail = page_text(client.get(reverse("judge_run", args=[project.slug, run.pk])))
    assert VLRB_SENDS in detail and "both orders" not in detail
    board = page_text(client.get(reverse("leaderboard", args=[project.slug, release.pk])))
    row = re.search(r">judge-k</a></td><td>(.*?)</td>", board)
    assert row and f"· {VLRB_SENDS} ·" in row[1] and "both orders" not in row[1]


def test_a_pairwise_run_still_says_both_orders(tmp_path, client):
    release = built(make_release_project(tmp_path, slug="pairs"))
    project = release.project
    curator = make_member(project, role="curator")
    client.force_login(curator)
    with FakeJudge(api_key=API_KEY, model=MODEL, records=[]) as fake:
        endpoint = make_endpoint(release, fake)
    form = page_text(client.get(reverse("judge_run_new", args=[project.slug, release.pk])))
    assert "the swapped option is ignored" not in form
    run = start_judge_run(
        release=release, endpoint=endpoint, name="two-pass", swapped=True, concurrency=1,
        user=curator, enqueue=False,
    )  # fmt: skip
    detail = page_text(client.get(reverse("judge_run", args=[project.slug, run.pk])))
    assert "both orders" in detail
    one = start_judge_run(
        release=release, endpoint=endpoint, name="one-pass", swapped=False, concurrency=1,
        user=curator, enqueue=False,
    )  # fmt: skip
    detail = page_text(client.get(reverse("judge_run", args=[project.slug, one.pk])))
    assert "original order only" in detail
