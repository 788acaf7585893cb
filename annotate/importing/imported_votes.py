"""Published annotations cast as votes (issue 30): an import option, off by
default, for formats that carry per-annotator labels (a format module's
`votes` turns an item's labels into PublishedVotes), so agreement, the
contested rule and the label audit work on a published benchmark a team
re-curates.

Who voted: pseudonymous *imported annotators*, one per position in the
file's annotation lists (`human_annotations[0]` is `imported-1`, …): users
`imported-<project slug>-<n>` that are inactive and have no usable password
(they can never log in), members of the project as inactive annotators with
the pseudonym `imported-<n>`, so every view and export that names an
annotator says "imported"; each of their judgements also carries
`imported=True` (exports, the API and the curator's pages show it).

What a vote is: the format module says (its docstring), in canonical terms.
A published ranking (`PublishedVote.ranks`, one place per canonical slot,
1 = best, ties share a place) is cast as the project's task answers it: a
ranking project's N-slot ranking vote (a rank on each slot row, counted in
votes_ranked), a best-of-N project's pick of the slot ranked first (none
cast when several share the first place), a pair's choice (its better slot,
or a tie).

How it is written: each vote is a submitted assignment (never open: it
never holds a lease, never enters the claim queue, nobody's work in
progress) and its judgement, in the import's transaction; the item's
tallies count them as any vote, and its `votes_needed` rises only if the
imported votes and the live leases it already had would not fit. Only
items the import created get votes (re-importing is a no-op); the rule is
then applied to those items by curation (signal `imported_votes_cast`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db.models import F
from django.db.models.functions import Greatest
from django.utils import timezone

from annotate import signals
from annotate.importing.records import ImportFailed, ImportProblem
from annotate.loop import rules
from annotate.models import (
    Assignment,
    AssignmentStatus,
    Item,
    Judgement,
    JudgementSlot,
    Membership,
    Project,
    Role,
    Task,
)


@dataclass(frozen=True)
class PublishedVote:
    """One published annotation in canonical terms (response 1 = A)."""

    choice: str = ""
    strength: int | None = None
    grade_1: str = ""
    grade_2: str = ""
    # A published ranking instead of a choice: a place per canonical slot.
    ranks: tuple[int, ...] = ()


def as_task(vote: PublishedVote, task: str) -> PublishedVote | None:
    """The vote as a project of `task` stores it (see module); None: a
    best-of-N pick of a ranking with a tied first place (not cast)."""
    if not vote.ranks:
        return vote
    ranks = vote.ranks
    if task == Task.RANKING:
        return PublishedVote(choice="", ranks=ranks)
    top = [str(slot) for slot, rank in enumerate(ranks, start=1) if rank == min(ranks)]
    if task == Task.BEST_OF_N:
        # The ranks stay for the display order's length; no rank rows are written.
        return PublishedVote(choice=top[0], ranks=ranks) if len(top) == 1 else None
    return PublishedVote(choice=top[0] if len(top) == 1 else "tie")


def username(project: Project, n: int) -> str:
    return f"imported-{project.slug}-{n}"


def pseudonym(n: int) -> str:
    return f"imported-{n}"


def imported_annotators(project: Project, count: int, *, filename: str) -> list:
    """The project's imported annotators 1..count, created as needed:
    inactive users without a usable password, inactive members."""
    User = get_user_model()
    users = []
    for n in range(1, count + 1):
        user, created = User.objects.get_or_create(
            username=username(project, n), defaults={"is_active": False}
        )
        if created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
        elif user.is_active or user.has_usable_password():
            raise ImportFailed(
                [
                    ImportProblem(
                        filename,
                        f"the user name {user.username!r} of imported annotator {n} belongs to "
                        "an account that can log in; rename that account first",
                    )
                ]
            )
        Membership.objects.get_or_create(
            project=project,
            user=user,
            defaults={"role": Role.ANNOTATOR, "pseudonym": pseudonym(n), "is_active": False},
        )
        users.append(user)
    return users


def cast_votes(
    *, project: Project, votes: Mapping[int, Sequence[PublishedVote]], filename: str
) -> int:
    """Write the published votes of the items `votes` maps (item pk -> its
    votes, annotator n = position n) as submitted judgements of the
    imported annotators, inside the caller's transaction. Returns the
    number of votes cast."""
    task = project.task
    votes = {pk: [c for c in (as_task(vote, task) for vote in v) if c] for pk, v in votes.items()}
    votes = {pk: v for pk, v in votes.items() if v}
    if not votes:
        return 0
    n_slot = task in rules.N_SLOT_TASKS
    annotators = imported_annotators(
        project, max(len(v) for v in votes.values()), filename=filename
    )
    now = timezone.now()
    assignments = []
    for pk, item_votes in votes.items():
        for n, vote in enumerate(item_votes):
            assignments.append(
                Assignment(
                    item_id=pk,
                    annotator=annotators[n],
                    status=AssignmentStatus.SUBMITTED,
                    # As imported (canonical order): nobody saw it displayed.
                    display_order="".join(str(s) for s in range(1, len(vote.ranks) + 1)) or "12",
                    claimed_at=now,
                    lease_expires_at=now + timedelta(seconds=1),
                    submitted_at=now,
                )
            )
    Assignment.objects.bulk_create(assignments, batch_size=2000)
    judgements = []
    grades = []
    it = iter(assignments)
    for item_votes in votes.values():
        for vote in item_votes:
            judgements.append(
                Judgement(
                    assignment=next(it),
                    task=task if n_slot else Task.PAIRWISE,
                    choice=vote.choice,
                    strength=vote.strength,
                    imported=True,
                )
            )
            grades.append(
                ((vote.grade_1, vote.grade_2), vote.ranks if task == Task.RANKING else ())
            )
    Judgement.objects.bulk_create(judgements, batch_size=2000)
    # Letter grades and ranks are per-slot answers: a row for each slot answered.
    JudgementSlot.objects.bulk_create(
        (
            JudgementSlot(judgement=judgement, slot=slot, grade=grade, rank=rank)
            for judgement, (pair, ranks) in zip(judgements, grades, strict=True)
            for slot, grade, rank in _slot_answers(pair, ranks)
        ),
        batch_size=2000,
    )
    # One UPDATE per distinct tally (items with the same counts together).
    tallies: dict[tuple[int, int, int, int], list[int]] = defaultdict(list)
    for pk, item_votes in votes.items():
        if n_slot:  # a pick or a ranking counts in votes_ranked alone (rules.tally_columns)
            tallies[(0, 0, 0, len(item_votes))].append(pk)
            continue
        n1 = sum(1 for v in item_votes if v.choice == "1")
        n2 = sum(1 for v in item_votes if v.choice == "2")
        tallies[(n1, n2, len(item_votes) - n1 - n2, 0)].append(pk)
    for (n1, n2, ties, ranked), pks in tallies.items():
        k = n1 + n2 + ties + ranked
        # SET reads the old row: votes_needed never below the votes and leases it holds.
        Item.objects.filter(pk__in=pks).update(
            votes_needed=Greatest(F("votes_needed"), F("live_assignments") + k),
            live_assignments=F("live_assignments") + k,
            votes_1=F("votes_1") + n1,
            votes_2=F("votes_2") + n2,
            votes_tie=F("votes_tie") + ties,
            votes_ranked=F("votes_ranked") + ranked,
        )
    for n, user in enumerate(annotators):
        cast = sum(1 for v in votes.values() if len(v) > n)
        Membership.objects.filter(project=project, user=user).update(judged=F("judged") + cast)
    signals.imported_votes_cast.send(sender=Judgement, project=project, item_ids=list(votes))
    return len(judgements)


def _slot_answers(grades: tuple[str, str], ranks: tuple[int, ...]):
    """(slot, grade, rank) of every slot a vote answers."""
    n = max(len(ranks), 2)
    for slot in range(1, n + 1):
        grade = grades[slot - 1] if slot <= 2 else ""
        rank = ranks[slot - 1] if ranks else None
        if grade or rank is not None:
            yield slot, grade, rank
