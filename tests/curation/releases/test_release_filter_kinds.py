"""The release's low-consensus and disagreement filters, keeping aside,
length balancing and the balance report (issue 36 item 4), each against a
direct computation."""

import json
import random
from collections import Counter

import numpy as np
import pytest
from django.utils import timezone

from annotate.models import Item
from curation.models import Evaluation, ItemPrediction, Release
from curation.releases import balance, filter_outputs, filters
from curation.releases.build import build_release
from curation.releases.service import ReleaseError, create_release, included_verdicts
from tests.curation.releases.test_releases import ALL_DOMAINS, make_release_project, media
from tests.factories import make_assignment, make_judgement, make_user

pytestmark = pytest.mark.django_db

LOW, HUMAN, SHARE = 0.7, 0.6, 0.6


def seeded_votes(project, rng):
    """1-4 current studio votes per included item, plus votes that must not
    count: a revised (non-current) one and an imported one."""
    voters = [make_user(f"{project.slug}-v{n}") for n in range(4)]
    for verdict in included_verdicts(project, ALL_DOMAINS).select_related("item"):
        item = verdict.item
        for user in voters[: rng.randint(1, 4)]:
            a = make_assignment(item, user, status="submitted", submitted_at=timezone.now())
            if rng.random() < 0.2:  # revised: only revision 2 counts
                make_judgement(a, choice="2" if rng.random() < 0.5 else "1", is_current=False)
                make_judgement(a, choice=rng.choice("12"), revision=2)
            else:
                make_judgement(a, choice=rng.choice(["1", "1", "2", "tie"]))
        if rng.random() < 0.3:
            a = make_assignment(item, make_user(), status="submitted", submitted_at=timezone.now())
            make_judgement(a, choice="2", imported=True)


def seeded_ensemble(project, base, rng):
    verdicts = list(included_verdicts(project, ALL_DOMAINS).select_related("item"))
    evals = []
    for name in ("judge-a", "judge-b"):
        ev = Evaluation.objects.create(release=base, name=name, predictions="p.jsonl")
        evals.append(ev)
        rows = []
        for v in verdicts:
            if rng.random() < 0.1:
                continue
            swapped = rng.random() < 0.8
            rows.append(
                ItemPrediction(
                    evaluation=ev,
                    item=v.item,
                    external_id=v.item.external_id,
                    category="c",
                    sub_bucket="s",
                    chosen=v.final_choice,
                    choice=rng.choice("12"),
                    swapped_choice=rng.choice("12") if swapped else "",
                    has_swapped=swapped,
                    correct=False,
                )
            )
        ItemPrediction.objects.bulk_create(rows)
    return [e.pk for e in evals]


@pytest.fixture
def world(tmp_path):
    project = make_release_project(tmp_path, slug="tfk")
    base = create_release(
        project=project, version="v0", notes="", domains=ALL_DOMAINS, seed=3, user=None,
        enqueue=False,
    )  # fmt: skip
    rng = random.Random(364)
    seeded_votes(project, rng)
    return project, seeded_ensemble(project, base, rng)


def human(item_id):
    """(top count, top choice, all) of the current studio votes, directly."""
    from annotate.models import Judgement

    votes = Counter(
        Judgement.objects.filter(
            assignment__item_id=item_id, is_current=True, imported=False
        ).values_list("choice", flat=True)
    )
    if not votes:
        return 0, None, 0
    choice, top = min(votes.items(), key=lambda kv: (-kv[1], kv[0]))
    return top, choice, sum(votes.values())


def ensemble(item_id, ids):
    n = Counter()
    for p in ItemPrediction.objects.filter(item_id=item_id, evaluation_id__in=ids):
        n[p.choice] += 1
        if p.has_swapped:
            n[p.swapped_choice] += 1
    return n


def reference_outcomes(project, spec):
    """{item id: filter} of the matched items, by the rules' words."""
    out = {}
    for v in included_verdicts(project, ALL_DOMAINS):
        top, choice, total = human(v.item_id)
        matched = []
        if "too_easy" in spec:
            ids = spec["too_easy"]["evaluations"]
            right = {
                p.evaluation_id
                for p in ItemPrediction.objects.filter(item_id=v.item_id, evaluation_id__in=ids)
                if p.has_swapped and p.choice == p.swapped_choice == v.final_choice
            }
            matched.append(("too_easy", right == set(ids)))
        if "low_consensus" in spec:
            matched.append(("low_consensus", total > 0 and top / total < LOW))
        if "disagreement" in spec:
            e = ensemble(v.item_id, spec["disagreement"]["evaluations"])
            en = sum(e.values())
            strong = total > 0 and top / total >= HUMAN and en > 0
            differs = any(e[side] / en >= SHARE and choice != side for side in "12") if en else 0
            matched.append(("disagreement", strong and differs))
        first = next((name for name, hit in matched if hit), None)
        if first:
            out[v.item_id] = first
    return out


def spec_of(project, ids, **fields):
    return filters.check_filters(project=project, seed=1, **fields)


def test_low_consensus_selection_equals_reference(world):
    project, _ = world
    spec = spec_of(project, None, low_consensus=LOW)
    got = dict(
        filters.with_outcome(included_verdicts(project, ALL_DOMAINS), spec, select=True)
        .exclude(filter_outcome="")
        .values_list("item_id", "filter_outcome")
    )
    expected = reference_outcomes(project, spec)
    assert got == expected and expected  # the seeded world matches something


def test_disagreement_selection_equals_reference(world):
    project, ids = world
    spec = spec_of(
        project, ids, disagreement_ensemble=ids, disagreement_human=HUMAN, disagreement_share=SHARE
    )
    assert spec["disagreement"]["action"] == "hold"  # kept aside for review by default
    got = dict(
        filters.with_outcome(included_verdicts(project, ALL_DOMAINS), spec, select=True)
        .exclude(filter_outcome="")
        .values_list("item_id", "filter_outcome")
    )
    expected = reference_outcomes(project, spec)
    assert got == expected and expected


def all_three(project, ids, **extra):
    return dict(
        too_easy_ensemble=ids,
        low_consensus=LOW,
        disagreement_ensemble=ids,
        disagreement_human=HUMAN,
        disagreement_share=SHARE,
        **extra,
    )


def test_filter_pass_counts_equal_reference_in_fixed_queries(world, django_assert_num_queries):
    project, ids = world
    spec = spec_of(project, ids, **all_three(project, ids))
    release = type("R", (), {"filters": spec})()
    before = included_verdicts(project, ALL_DOMAINS)
    # The verdicts, the vote tallies and the predictions (one query each),
    # one for the lengths of the pairs left: the same at 20 items as at 100,000.
    with django_assert_num_queries(4):
        rows = filter_outputs.filtered_rows(release, before)
        counts = filter_outputs.counts_of(rows)
        filter_outputs.pair_lengths(filter_outputs.without_filtered(before, rows))
    assert counts == filters.outcome_counts(before, spec)
    assert rows == filters.matched_rows_sql(before, spec)  # the SQL form, equal
    expected = reference_outcomes(project, spec)
    assert {r[0]: r[4] for r in rows} == expected
    domain = dict(Item.objects.filter(project=project).values_list("pk", "domain__slug"))
    by = Counter((name, domain[i]) for i, name in expected.items())
    assert {(n, d): k for n, per in counts.items() for d, k in per.items()} == dict(by)


def test_release_keeps_aside_and_drops_and_states_it(world):
    project, ids = world
    release = create_release(
        project=project, version="v-f", notes="", domains=ALL_DOMAINS, seed=11, user=None,
        enqueue=False, **all_three(project, ids, low_consensus_action="hold"),
    )  # fmt: skip
    expected = reference_outcomes(project, release.filters)
    release = build_release(release_id=release.pk)
    assert release.status == "ready", release.error
    folder = media(release.folder)
    ext = dict(Item.objects.filter(project=project).values_list("pk", "external_id"))
    records = {r["ID"] for r in json.loads((folder / "all_data.json").read_text())}
    assert not records & {ext[i] for i in expected}  # nothing filtered is in the benchmark
    held = [json.loads(x) for x in (folder / "held_out/held_out.jsonl").read_text().splitlines()]
    want_held = {ext[i]: n for i, n in expected.items() if n in ("low_consensus", "disagreement")}
    assert {h["ID"]: h["release_filter"] for h in held} == want_held
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["held_out"]["total"] == len(want_held)
    assert "held_out/held_out.jsonl" in manifest["files"]
    f = manifest["release_filters"]
    assert f["too_easy"]["dropped"] == sum(n == "too_easy" for n in expected.values())
    assert f["low_consensus"]["held_out"] == sum(n == "low_consensus" for n in expected.values())
    assert f["low_consensus"]["parameters"] == {"threshold": LOW}
    assert f["disagreement"]["parameters"] == {"human": HUMAN, "ensemble": SHARE}
    assert [e["name"] for e in f["disagreement"]["ensemble"]] == ["judge-a", "judge-b"]
    lines = [json.loads(x) for x in (folder / "provenance.jsonl").read_text().splitlines()]
    left_out = {x["ID"]: x["release_filter"] for x in lines if "release_filter" in x}
    assert left_out == {ext[i]: n for i, n in expected.items()}
    card = (folder / "README.md").read_text()
    assert "Low-consensus filter" in card and "kept aside in `held_out/`" in card
    assert "Disagreement filter" in card and "Too-easy filter" in card


def test_balance_report_equals_direct_computation(world):
    project, _ = world
    release = create_release(
        project=project, version="v-b", notes="", domains=ALL_DOMAINS, seed=11, user=None,
        enqueue=False, balance_report=True,
    )  # fmt: skip
    release = build_release(release_id=release.pk)
    folder = media(release.folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    report = manifest["balance_report"]
    records = json.loads((folder / "all_data.json").read_text())
    domain = dict(Item.objects.filter(project=project).values_list("external_id", "domain__slug"))
    for slug in {domain[r["ID"]] for r in records}:
        mine = [r for r in records if domain[r["ID"]] == slug]
        first = np.mean([r["Better"] == "Output1" for r in mine])
        assert report["side"][slug]["first_share"] == pytest.approx(first, abs=1e-9)
        chosen = [r["Output1"] if r["Better"] == "Output1" else r["Output2"] for r in mine]
        other = [r["Output2"] if r["Better"] == "Output1" else r["Output1"] for r in mine]
        longer = np.mean([len(a) > len(b) for a, b in zip(chosen, other, strict=True)])
        assert report["length"][slug]["longer_share"] == pytest.approx(longer, abs=1e-9)
        assert report["length"][slug]["pairs"] == len(mine)
    assert "Balance of" in (folder / "README.md").read_text()


def test_length_balancing_drops_the_fewest_pairs_seeded(world):
    project, _ = world
    release = create_release(
        project=project, version="v-l", notes="", domains=ALL_DOMAINS, seed=11, user=None,
        enqueue=False, balance_tolerance=0.1,
    )  # fmt: skip
    pairs, _ = filter_outputs.pair_lengths(included_verdicts(project, ALL_DOMAINS))
    drops = balance.balance_drops(pairs, tolerance=0.1, seed=11)
    release = build_release(release_id=release.pk)
    folder = media(release.folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    lb = manifest["release_filters"]["length_balance"]
    assert lb["parameters"] == {"seed": 11, "tolerance": 0.1}
    assert lb["dropped_per_domain"] == {d: len(i) for d, i in drops.items()}
    for slug, row in manifest["balance_report"]["length"].items():
        assert abs(row["longer_share"] - 0.5) <= 0.1 + 1e-12, slug
    assert "Length balancing" in (folder / "README.md").read_text()


def test_fewest_drops_by_brute_force():
    for n in range(1, 30):
        for longer in range(n + 1):
            for tol in (0.0, 0.05, 0.1, 0.25):
                which, k = balance.to_drop(n, longer, tol)
                ok = [
                    j
                    for j in range(n + 1)
                    if balance._within(longer - j if which == "longer" else longer, n - j, tol)
                ]
                assert k == (ok[0] if which else 0), (n, longer, tol)


def test_seeded_balancing_is_deterministic():
    rng = random.Random(5)
    pairs = [balance.PairLength(i, "d", rng.randint(1, 9), rng.randint(1, 3)) for i in range(500)]
    a = balance.balance_drops(pairs, tolerance=0.02, seed=7)
    assert a == balance.balance_drops(list(reversed(pairs)), tolerance=0.02, seed=7)
    assert a != balance.balance_drops(pairs, tolerance=0.02, seed=8)
    kept = [p for p in pairs if p.item_id not in set(a["d"])]
    assert abs(np.mean([p.longer for p in kept]) - 0.5) <= 0.02 + 1e-12


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"low_consensus": 1.5}, "between 0 and 1"),
        ({"disagreement_ensemble": [1], "disagreement_human": 0.5}, "above 0.5"),
        ({"disagreement_human": 0.9}, "Choose the disagreement filter's ensemble"),
        ({"disagreement_ensemble": [999999]}, "Unknown evaluation"),
        ({"low_consensus": 0.5, "low_consensus_action": "shred"}, "Unknown action"),
        ({"balance_tolerance": 0.5}, "tolerance"),
    ],
)
def test_invalid_filters_are_refused_by_service_form_and_api(world, client, fields, message):
    from tests.factories import make_member

    project, ids = world
    if fields.get("disagreement_ensemble") == [1]:
        fields = {**fields, "disagreement_ensemble": ids}
    with pytest.raises(ReleaseError, match=message):
        create_release(
            project=project, version="v-x", notes="", domains=ALL_DOMAINS, seed=1, user=None,
            enqueue=False, **fields,
        )  # fmt: skip
    curator = make_member(project, role="curator")
    client.force_login(curator)
    form_data = {"version": "v-x", "domains": ALL_DOMAINS, "seed": 1, **fields}
    page = client.post(f"/p/{project.slug}/releases/new/", form_data)
    assert page.status_code == 400
    # Ranges and choices are the form's errors, the rest the service's.
    text = page.content.decode().replace("&#x27;", "'")
    assert any(m in text for m in (message, "Ensure this value", "Select a valid choice"))
    api = client.post(
        f"/api/v1/projects/{project.slug}/releases/",
        {"version": "v-x", "domains": ALL_DOMAINS, "seed": 1, **fields},
        content_type="application/json",
    )
    assert api.status_code == 400, api.content
    assert not Release.objects.filter(project=project, version="v-x").exists()


def test_api_cuts_a_release_with_filters(world, client):
    from tests.factories import make_member

    project, ids = world
    client.force_login(make_member(project, role="curator"))
    api = client.post(
        f"/api/v1/projects/{project.slug}/releases/",
        {"version": "v-api", "domains": ALL_DOMAINS, "seed": 1, **all_three(project, ids)},
        content_type="application/json",
    )
    assert api.status_code == 202, api.content
    body = api.json()
    assert body["filters"]["low_consensus"] == {"threshold": LOW, "action": "drop"}
    assert body["filters"]["disagreement"]["action"] == "hold"
    assert body["filters"]["balance"] == {"tolerance": None, "seed": 1}


def test_annotator_cannot_cut_a_filtered_release(world, client):
    from tests.factories import make_member

    project, _ = world
    client.force_login(make_member(project, role="annotator"))
    api = client.post(
        f"/api/v1/projects/{project.slug}/releases/",
        {"version": "v-no", "domains": ALL_DOMAINS, "low_consensus": LOW},
        content_type="application/json",
    )
    assert api.status_code in (403, 404)


def test_a_rekeyed_release_shows_no_old_id_in_held_out_or_provenance(world):
    project, _ = world
    release = create_release(
        project=project, version="v-rk", notes="", domains=ALL_DOMAINS, seed=11, user=None,
        enqueue=False, rekey=True, low_consensus=LOW, low_consensus_action="hold",
    )  # fmt: skip
    release = build_release(release_id=release.pk)
    assert release.status == "ready", release.error
    folder = media(release.folder)
    old = set(Item.objects.filter(project=project).values_list("external_id", flat=True))
    held = (folder / "held_out/held_out.jsonl").read_text()
    lines = [json.loads(x) for x in (folder / "provenance.jsonl").read_text().splitlines()]
    shown = [json.loads(x)["ID"] for x in held.splitlines()]
    shown += [x["ID"] for x in lines if "release_filter" in x]
    assert shown and all(i.startswith("heldout_") and i not in old for i in shown)
