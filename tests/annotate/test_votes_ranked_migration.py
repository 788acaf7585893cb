"""Migration 0026 counts each item's current best-of-N picks and rankings
into Item.votes_ranked, makes the progress counters count them (the
triggers watch the new column, the backfill moves the counters), and
unwinds: back at 0025 the counters are what they were and the old triggers
keep them. Rows made by the models as they were; SQLite and PostgreSQL."""

from datetime import timedelta

import pytest
from django.db.models import F
from django.utils import timezone

from tests.migrations import migrate, migrated_to

BEFORE = [("annotate", "0025_progress_stripe_per_backend")]
AFTER = [("annotate", "0026_item_votes_ranked")]


def _sums(apps, project_id) -> tuple[int, int, int]:
    rows = apps.get_model("annotate", "ProgressCounter").objects.filter(project_id=project_id)
    return (
        sum(r.needed for r in rows),
        sum(r.collected for r in rows),
        sum(r.unfilled for r in rows),
    )


def _world(apps):
    """A ranking project (items with 3, 1 and 0 current rankings, one of
    them revised), a best-of-N one (2 picks on an item that needs 1 more
    after escalation) and a pair project (tallies only)."""
    User = apps.get_model("auth", "User")
    Project = apps.get_model("annotate", "Project")
    Domain = apps.get_model("annotate", "Domain")
    Item = apps.get_model("annotate", "Item")
    Assignment = apps.get_model("annotate", "Assignment")
    Judgement = apps.get_model("annotate", "Judgement")
    JudgementSlot = apps.get_model("annotate", "JudgementSlot")
    now = timezone.now()
    users = [User.objects.create(username=f"u{n}") for n in range(4)]
    made = {}

    def item(project, domain, name, needed, live, **tallies):
        made[name] = Item.objects.create(
            project=project,
            domain=domain,
            external_id=name,
            prompt="?",
            response_1="a",
            response_2="b",
            content_hash=name,
            votes_needed=needed,
            live_assignments=live,
            **tallies,
        )
        return made[name]

    def voted(item, user, task, choice="", revisions=1):
        a = Assignment.objects.create(
            item=item,
            annotator=user,
            status="submitted",
            display_order="123",
            claimed_at=now,
            lease_expires_at=now + timedelta(minutes=30),
            submitted_at=now,
        )
        for revision in range(1, revisions + 1):
            j = Judgement.objects.create(
                assignment=a,
                revision=revision,
                is_current=revision == revisions,
                task=task,
                choice=choice,
            )
            if task == "ranking":
                JudgementSlot.objects.bulk_create(
                    JudgementSlot(judgement=j, slot=s, rank=s) for s in (1, 2, 3)
                )

    projects = {}
    for slug, task in (("rank", "ranking"), ("pick", "best_of_n"), ("pair", "pairwise")):
        project = projects[slug] = Project.objects.create(slug=slug, name=slug, task=task)
        Domain.objects.create(
            project=project, slug="d", title="D", export_category="d", kind="preference"
        )
    rank, pick, pair = (projects[s] for s in ("rank", "pick", "pair"))
    domain = {slug: Domain.objects.get(project=p) for slug, p in projects.items()}
    full = item(rank, domain["rank"], "r-full", 3, 3)
    for user in users[:3]:
        voted(full, user, "ranking", revisions=2 if user == users[0] else 1)
    one = item(rank, domain["rank"], "r-one", 3, 2)
    voted(one, users[0], "ranking")
    item(rank, domain["rank"], "r-none", 3, 0)
    escalated = item(pick, domain["pick"], "k-escalated", 3, 2)
    voted(escalated, users[0], "best_of_n", "2")
    voted(escalated, users[1], "best_of_n", "none")
    item(pair, domain["pair"], "p", 3, 3, votes_1=2, votes_tie=1)
    return projects, made


@pytest.mark.django_db(transaction=True)
def test_n_slot_votes_are_counted_and_the_counters_follow_them_and_back():
    with migrated_to(BEFORE) as apps:
        projects, _ = _world(apps)
        rank, pick, pair = (projects[s].pk for s in ("rank", "pick", "pair"))
        # Before: the N-slot votes moved no counter.
        before = {p: _sums(apps, p) for p in (rank, pick, pair)}
        assert before == {rank: (9, 0, 2), pick: (3, 0, 1), pair: (3, 3, 0)}

        apps = migrate(AFTER)
        Item = apps.get_model("annotate", "Item")
        counted = dict(Item.objects.values_list("external_id", "votes_ranked"))
        assert counted == {"r-full": 3, "r-one": 1, "r-none": 0, "k-escalated": 2, "p": 0}
        # needed; min(votes, needed); items with live < needed
        assert _sums(apps, rank) == (9, 4, 2)
        assert _sums(apps, pick) == (3, 2, 1)
        assert _sums(apps, pair) == before[pair]
        # A vote after the migration moves the counters (the triggers watch
        # the new column).
        Item.objects.filter(external_id="k-escalated").update(
            votes_ranked=F("votes_ranked") + 1, live_assignments=3
        )
        assert _sums(apps, pick) == (3, 3, 0)

        apps = migrate(BEFORE)
        Item = apps.get_model("annotate", "Item")
        assert _sums(apps, rank) == before[rank]
        assert _sums(apps, pick) == (3, 0, 0)
        assert _sums(apps, pair) == before[pair]
        # The old triggers are back: a pair vote moves the counters.
        Item.objects.filter(external_id="p").update(votes_needed=4)
        assert _sums(apps, pair) == (4, 3, 1)
