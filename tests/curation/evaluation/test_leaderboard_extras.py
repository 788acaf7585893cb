"""Issue 31, the leaderboard: one error for a broken file, hints that name
the real path (and the download and API call), Wilson intervals per score
and the macro average's bootstrap interval on the page and in the API
(the Wilson bounds equal statsmodels' to 1e-9), unknown and missing IDs per
entry, and chart points that do not hide each other."""

import json
import re
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient
from statsmodels.stats.proportion import proportion_confint

from curation.benchmarks.mrb.scoring import (
    MACRO_BOOTSTRAP_RESAMPLES,
    MACRO_BOOTSTRAP_SEED,
    macro_bootstrap_ci,
    wilson_interval,
)
from curation.models import Evaluation
from tests.curation.evaluation.test_evaluations import judge_lines, records_of, upload
from tests.curation.releases.test_releases import built, make_release_project
from tests.factories import make_member

pytestmark = pytest.mark.django_db


@pytest.fixture
def release(tmp_path):
    return built(make_release_project(tmp_path, slug="lbx"))


def test_wilson_interval_equals_statsmodels_to_1e9():
    for n in (1, 2, 3, 7, 10, 31, 100, 977, 5211):
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
            if k < 0:
                continue
            ours = wilson_interval(k, n)
            low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
            assert ours[0] == pytest.approx(low, abs=1e-9), (k, n)
            assert ours[1] == pytest.approx(high, abs=1e-9), (k, n)


def test_macro_bootstrap_equals_a_line_by_line_reference():
    """The vectorised binomial draw is the stratified bootstrap: the same
    generator drawing each resample's per-category counts one by one gives
    the same percentile interval to 1e-12; and resampling the lines
    themselves (scipy's own bootstrap, a different random stream) lands
    within Monte Carlo error of it."""
    from scipy.stats import bootstrap

    from curation.benchmarks.mrb.scoring import Group

    groups = [
        Group("knowledge", "category", 40, 50),
        Group("reasoning", "category", 9, 20),
        Group("safety", "category", 2, 2),
    ]
    ours = macro_bootstrap_ci(groups)
    rng = np.random.default_rng(MACRO_BOOTSTRAP_SEED)
    n = np.array([g.total for g in groups])
    p = np.array([g.correct / g.total for g in groups])
    means = []
    draws = rng.binomial(n, p, size=(MACRO_BOOTSTRAP_RESAMPLES, len(groups)))
    for row in draws:
        means.append(sum(row[i] / n[i] for i in range(len(groups))) / len(groups))
    low, high = np.quantile(np.array(means), [0.025, 0.975])
    assert ours == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))

    lines = [np.array([1] * g.correct + [0] * (g.total - g.correct)) for g in groups]
    scipy_ci = bootstrap(
        lines,
        lambda *xs: np.mean([x.mean() for x in xs]),
        n_resamples=20000,
        method="percentile",
        vectorized=False,
        random_state=np.random.default_rng(1),
    ).confidence_interval
    assert abs(scipy_ci.low - ours[0]) < 0.01 and abs(scipy_ci.high - ours[1]) < 0.01


def test_a_broken_file_is_reported_once(client, release):
    client.force_login(make_member(release.project, role="curator"))
    response = upload(client, release, "broken", b"not json\n")
    assert response.status_code == 400
    html = response.content.decode()
    message = re.search(r"preds\.jsonl, line 1[^<]*", html).group(0)
    assert html.count(message) == 1


def test_hints_name_the_real_release_folder_the_download_and_the_api(client, release):
    client.force_login(make_member(release.project, role="curator"))
    url = reverse("leaderboard", args=[release.project.slug, release.pk])
    page = client.get(url)
    path = page.context["release_path"]
    assert (Path(settings.BASE_DIR) / path).resolve() == (
        Path(settings.MEDIA_ROOT) / release.folder
    ).resolve()
    assert (Path(settings.BASE_DIR) / path / "all_data.json").is_file()
    html = page.content.decode()
    assert f"manage.py evaluate --format mrb {path} PREDICTIONS" in html
    assert "media/releases" not in html.replace(path, "")  # no other, guessed path
    assert reverse("release_download", args=[release.project.slug, release.pk]) in html
    api = reverse("api_evaluations", args=[release.project.slug, release.pk])
    assert f"http://testserver{api}" in html and "-F predictions=@predictions.jsonl" in html


def test_intervals_and_id_counts_on_the_page_and_in_the_api(client, release):
    curator = make_member(release.project, role="curator")
    client.force_login(curator)
    records = records_of(release)
    lines = judge_lines(records[:-2], wrong={records[0]["ID"]}).decode().split("\n")
    lines.append(json.dumps({"ID": "not-in-release", "output": "[[A]]"}))
    assert upload(client, release, "partial", "\n".join(lines).encode()).status_code == 302
    evaluation = Evaluation.objects.get(name="partial")
    groups = {g["name"]: g for g in evaluation.report["official"]["groups"]}
    overall = groups["all"]
    low, high = proportion_confint(overall["correct"], overall["total"], method="wilson")

    page = client.get(reverse("leaderboard", args=[release.project.slug, release.pk]))
    row = page.context["boards"][0].rows[0]
    assert row["missing"] == 2 and row["unknown"] == 1
    assert row["ci"]["all"][0] == pytest.approx(low, abs=1e-9)
    assert row["ci"]["all"][1] == pytest.approx(high, abs=1e-9)
    html = page.content.decode()
    assert f'{100 * low:.1f}\u2013{100 * high:.1f} <span class="n">n={overall["total"]}' in html
    assert f"n={overall['total']}" in html
    macro = evaluation.report["extras"]["macro_average"]
    assert f"{100 * macro['ci95'][0]:.1f}\u2013{100 * macro['ci95'][1]:.1f}</span>" in html
    assert ">1</td>" in html and "unknown IDs" in html

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=curator).key}")
    listed = api.get(f"/api/v1/projects/{release.project.slug}/releases/{release.pk}/evaluations/")
    entry = listed.json()["results"][0]
    assert entry["accuracy_ci95"] == pytest.approx([low, high], abs=1e-9)
    assert entry["macro_average"]["ci95"] == macro["ci95"]
    assert (entry["missing_ids"], entry["unknown_ids"]) == (2, 1)
    # The MRB fields come from its benchmark module (mrb.api), in the order
    # the API always showed them; the detail adds the release and the table.
    base = ["id", "name", "accuracy", "scoring", "created_by", "created_at"]
    mrb = ["accuracy_ci95", "macro_average", "missing_ids", "unknown_ids"]
    assert list(entry) == base + mrb
    detail = api.get(
        f"/api/v1/projects/{release.project.slug}/releases/{release.pk}/evaluations/{entry['id']}/"
    ).json()
    assert list(detail)[: len(base) + len(mrb) + 3] == [
        *base,
        *mrb,
        "release",
        "per_category",
        "extras",
    ]
    assert detail["per_category"] == evaluation.report["official"]["groups"]
    assert detail["extras"] == evaluation.report["extras"]


def test_equal_scores_do_not_hide_each_other_in_the_chart(client, release):
    client.force_login(make_member(release.project, role="curator"))
    data = judge_lines(records_of(release))
    upload(client, release, "twin-a", data)
    upload(client, release, "twin-b", data)
    page = client.get(reverse("leaderboard", args=[release.project.slug, release.pk]))
    chart = page.context["boards"][0].context["chart"]
    places = [(p["x"], p["y"]) for p in chart["points"]]
    assert len(places) == len(set(places))  # same y, different x
    assert all(p["low"] is not None and p["low"] >= p["y"] >= p["high"] for p in chart["points"])
