"""Adaptive votes in the claim (issue 36, item 5): the base votes first in
the ordinary order, then the refit's open items least certain first; items
the refit settled are not served. Run on SQLite and on PostgreSQL (their
raw claim statements), and the ORM's reference pick on both."""

import inspect

import pytest

from annotate.loop import orm
from annotate.loop.service import Vote, claim_next_item, submit_judgement
from annotate.models import AdaptiveFit, Item, ItemCertainty, VoteMode
from curation.quality import adaptive as refits
from tests.factories import make_item, make_member, make_project

pytestmark = pytest.mark.django_db


def vote(choice="1"):
    return Vote(choice=choice, correct_1="yes", correct_2="no", confidence=2)


def give(project, user, choice="1"):
    assignment = claim_next_item(project=project, annotator=user)
    assert assignment is not None
    submit_judgement(assignment_id=assignment.pk, annotator=user, vote=vote(choice))
    return assignment.item_id


def adaptive_project(**kwargs):
    fields = {
        "votes_per_item": 2,
        "vote_mode": VoteMode.ADAPTIVE,
        "adaptive_base_votes": 2,
        "adaptive_budget": 3,
        "adaptive_stop_certainty": 0.9,
    }
    fields.update(kwargs)
    return make_project(**fields)


@pytest.fixture
def world(monkeypatch):
    """Four items with their base votes given (item d: one short), refitted
    with a fixed posterior: a certain, b uncertain, c less so, d below base."""
    project = adaptive_project()
    items = {name: make_item(project, shuffle_key=k) for k, name in enumerate("abcd")}
    first, second = make_member(project), make_member(project)
    for user in (first, second):
        for _ in range(4 if user is first else 3):
            give(project, user, "1" if user is first else "2")
    assert Item.objects.get(pk=items["d"].pk).n_votes == 1
    posterior = {items["a"].pk: 0.97, items["b"].pk: 0.55, items["c"].pk: 0.3}
    monkeypatch.setattr(refits.adaptive, "posterior", lambda rows: (posterior, "one_coin"))
    refits.refit(project_id=project.pk)
    return project, items


def test_refit_opens_uncertain_items_and_stops_certain_ones(world):
    project, items = world
    rows = {c.item_id: c for c in ItemCertainty.objects.filter(project=project)}
    assert {name: rows[item.pk].reason for name, item in items.items()} == {
        "a": "certain",
        "b": "open",
        "c": "open",
        "d": "base",
    }
    assert rows[items["b"].pk].certainty == pytest.approx(0.55)
    assert rows[items["c"].pk].certainty == pytest.approx(0.7)
    needed = dict(Item.objects.filter(project=project).values_list("pk", "votes_needed"))
    assert [needed[items[n].pk] for n in "abcd"] == [2, 3, 3, 2]
    fit = AdaptiveFit.objects.get(project=project)
    assert fit.method == "one_coin" and fit.counts == {"certain": 1, "open": 2, "base": 1}
    # What the queue can still serve: d's base vote, b's and c's extra ones.
    assert fit.offered == 3


def test_claims_serve_base_votes_first_then_least_certain(world):
    project, items = world
    newcomer = make_member(project)
    served = [give(project, newcomer) for _ in range(3)]
    assert served == [items["d"].pk, items["b"].pk, items["c"].pk]
    # a is settled: nothing more for anyone.
    assert claim_next_item(project=project, annotator=newcomer) is None
    assert claim_next_item(project=project, annotator=make_member(project)) is None


def test_orm_reference_pick_is_the_same_order(world):
    project, items = world
    newcomer = make_member(project)
    assert orm.pick(project=project, annotator=newcomer).pk == items["d"].pk
    Item.objects.filter(pk=items["d"].pk).update(votes_needed=1)
    assert orm.pick(project=project, annotator=newcomer).pk == items["b"].pk


def test_open_items_never_go_to_someone_who_voted_on_them(world):
    project, _ = world
    first = project.memberships.order_by("pk").first().user
    # The first annotator voted on a, b, c and d: nothing left for them.
    assert claim_next_item(project=project, annotator=first) is None


def test_a_fixed_project_ignores_certainty_rows(world):
    project, items = world
    project.vote_mode = VoteMode.FIXED
    project.save(update_fields=["vote_mode"])
    newcomer = make_member(project)
    # Every item but a misses one vote: the shuffle decides.
    assert give(project, newcomer) == items["b"].pk


def test_votes_queue_a_refit_every_so_often(world, monkeypatch):
    project, _ = world
    queued = []
    monkeypatch.setattr("config.celery.enqueue_on_commit", lambda task, pk: queued.append(pk))
    AdaptiveFit.objects.filter(project=project).update(offered=100, votes_since=0, queued=False)
    for _ in range(refits.REFIT_EVERY - 1):
        assert not refits.count_vote(project_id=project.pk)
    assert refits.count_vote(project_id=project.pk)
    assert not refits.count_vote(project_id=project.pk)  # one queued at a time
    assert queued == [project.pk]


def test_a_refit_is_due_once_every_offered_vote_came(world, monkeypatch):
    project, _ = world
    queued = []
    monkeypatch.setattr("config.celery.enqueue_on_commit", lambda task, pk: queued.append(pk))
    # The fixture's refit offered 3 votes.
    assert not refits.count_vote(project_id=project.pk)
    assert not refits.count_vote(project_id=project.pk)
    assert refits.count_vote(project_id=project.pk)
    assert queued == [project.pk]


def test_back_to_fixed_gives_items_their_votes_per_item_again(world, monkeypatch):
    project, _ = world
    admin = make_member(project, role="admin")
    monkeypatch.setattr("config.celery.enqueue_on_commit", lambda task, pk: None)
    assert refits.set_vote_mode(
        project=project,
        actor=admin,
        vote_mode=VoteMode.FIXED,
        base_votes=2,
        budget=3,
        stop_certainty=0.9,
    )
    assert not ItemCertainty.objects.filter(project=project).exists()
    assert set(Item.objects.filter(project=project).values_list("votes_needed", flat=True)) == {2}


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"budget": 1}, "adaptive_budget"),
        ({"base_votes": 0}, "adaptive_base_votes"),
        ({"stop_certainty": 1.0}, "adaptive_stop_certainty"),
        ({"vote_mode": "sometimes"}, "vote_mode"),
    ],
)
def test_settings_are_validated(changes, field):
    project = make_project()
    settings = {"vote_mode": "adaptive", "base_votes": 2, "budget": 5, "stop_certainty": 0.95}
    settings.update(changes)
    with pytest.raises(refits.AdaptiveSettingsError) as refused:
        refits.set_vote_mode(project=project, actor=None, **settings)
    assert field in refused.value.errors
    project.refresh_from_db()
    assert project.vote_mode == VoteMode.FIXED


def test_adaptive_needs_a_pairwise_project():
    project = make_project(task="ranking")
    with pytest.raises(refits.AdaptiveSettingsError) as refused:
        refits.set_vote_mode(
            project=project, actor=None, vote_mode="adaptive", base_votes=2, budget=5,
            stop_certainty=0.95,
        )  # fmt: skip
    assert "pairwise" in refused.value.errors["vote_mode"]


def test_judges_count_as_workers_and_agreement_stops_an_item(monkeypatch):
    from curation.models import Evaluation, ItemPrediction, Release

    project = adaptive_project(adaptive_stop_certainty=0.999)
    agreed, split = make_item(project), make_item(project)
    first, second = make_member(project), make_member(project)
    for user in (first, second):
        give(project, user, "1")  # agreed: 1 and 1
        give(project, user, "1" if user is first else "2")  # split: 1 and 2
    release = Release.objects.create(project=project, version="v1")
    for n, p1 in enumerate((0.8, 0.9)):
        entry = Evaluation.objects.create(release=release, name=f"judge-{n}", predictions="p")
        for item in (agreed, split):
            ItemPrediction.objects.create(
                evaluation=entry, item=item, external_id=item.external_id, category="c",
                sub_bucket="c", chosen="1", choice="1", correct=True, p1=p1,
            )  # fmt: skip
    seen = []

    def posterior(rows):
        seen.extend(rows)
        return {agreed.pk: 0.9, split.pk: 0.6}, "one_coin"

    monkeypatch.setattr(refits.adaptive, "posterior", posterior)
    refits.refit(project_id=project.pk)
    judges = {who for _, who, _ in seen if who.startswith("judge")}
    assert len(judges) == 2 and len(seen) == 8
    rows = {c.item_id: c.reason for c in ItemCertainty.objects.filter(project=project)}
    assert rows == {agreed.pk: "agreement", split.pk: "open"}
    assert AdaptiveFit.objects.get(project=project).judges == 2


def test_project_judge_runs_count_as_workers_when_both_orders_agree():
    from curation.models import JudgeRun, JudgeRunStatus, JudgeVote
    from curation.quality.adaptive import judge_labels

    project = adaptive_project()
    steady, flips, half = make_item(project), make_item(project), make_item(project)
    run = JudgeRun.objects.create(
        project=project, name="judge", base_url="https://judge.example/v1", model="m",
        max_tokens=8, timeout_seconds=5, swapped=True, status=JudgeRunStatus.COMPLETE,
    )  # fmt: skip
    for item, original, swapped in ((steady, "2", "2"), (flips, "1", "2"), (half, "1", "")):
        JudgeVote.objects.create(run=run, item=item, order="original", choice=original)
        JudgeVote.objects.create(run=run, item=item, order="swapped", choice=swapped)
    pending = JudgeRun.objects.create(
        project=project, name="pending", base_url="https://judge.example/v1", model="m",
        max_tokens=8, timeout_seconds=5, swapped=True,
    )  # fmt: skip
    JudgeVote.objects.create(run=pending, item=steady, order="original", choice="1")
    JudgeVote.objects.create(run=pending, item=steady, order="swapped", choice="1")
    # Only the complete run, and only where its two orders pick the same response.
    assert dict(judge_labels(project)) == {steady.pk: [(f"run{run.pk}", "2")]}


def test_a_refit_writes_in_batches_and_drops_what_it_leaves_out(world, monkeypatch):
    """Batches of one item give what one batch gives (each its own
    transaction at 100,000 items, bench/refit_bench.py); an item a curator
    decided since loses its certainty row; the stored rows are updated in
    place, not deleted and made again."""
    from curation.models import Verdict, VerdictStatus

    project, items = world
    before = {
        c.item_id: (c.reason, c.open, c.certainty)
        for c in ItemCertainty.objects.filter(project=project)
    }
    needed = dict(Item.objects.filter(project=project).values_list("pk", "votes_needed"))
    Verdict.objects.filter(item=items["c"]).update(status=VerdictStatus.EXCLUDED)
    monkeypatch.setattr(refits, "WRITE_BATCH", 1)
    commits = []
    real_atomic = refits.transaction.atomic

    def counted_atomic(*args, **kwargs):
        if inspect.currentframe().f_back.f_globals.get("__name__") == refits.__name__:
            commits.append(1)  # the refit's own transactions
        return real_atomic(*args, **kwargs)

    monkeypatch.setattr(refits.transaction, "atomic", counted_atomic)
    refits.refit(project_id=project.pk)
    after = {
        c.item_id: (c.reason, c.open, c.certainty)
        for c in ItemCertainty.objects.filter(project=project)
    }
    del before[items["c"].pk]
    assert after == before  # c, decided, has no row; the others as in one batch
    assert dict(Item.objects.filter(project=project).values_list("pk", "votes_needed")) == needed
    assert len(commits) == 3 + 1  # one per item refitted (a, b, d), then the fit
