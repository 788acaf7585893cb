"""The vote's rules, pure Python: what a valid vote is, which tallies it
counts in, when it may be revised, and the one mapping between what the
annotator saw (left/right) and the canonical terms every judgement is stored
in (response 1 / response 2). No Django import: tested without a database.

An Assignment stores the order its item's response slots were displayed
in, as a permutation of the slots (`display_order`: "12" or "21" for a
pair, the slot shown first first; up to MAX_SLOTS slots, one digit each),
chosen on the server (draw_order). For a pair, "swapped" (is_swapped) means
response 2 was displayed on the left. The services take a vote as
displayed (DisplayedVote) and map it here (canonical_vote), after locking
the assignment; everything else that turns a side into a response or back
(the compare page's error messages and history, the REST API's answers, the
votes export) calls the functions below.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Protocol

from annotate.loop import scales

# The values Judgement.choice and Judgement.correct_<n> may hold
# (annotate.models.Choice and Correctness; a test holds them equal).
CHOICES = ("1", "2", "tie")
TIE = "tie"
LABELS = ("yes", "no", "unsure")
GRADES = ("A", "B", "C")  # a response's letter grade (annotate.models.Grade)
SIDES = ("left", "right")
# Response slots are numbered 1..N in import order; a display order holds
# one digit per slot, so an item has at most nine.
MAX_SLOTS = 9
PAIR_ORDERS = ("12", "21")
PAIR_SLOTS = (1, 2)
# A best-of-N judgement's choice: the slot picked, or none of them.
BEST_OF_N_CHOICES = (*(str(slot) for slot in range(1, MAX_SLOTS + 1)), "none")


class AnnotationError(Exception):
    """A request the rules refuse; the message is shown to the annotator."""


class JudgementInvalid(AnnotationError):
    def __init__(self, errors: dict[str, str]):
        self.errors = errors
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))


@dataclass(frozen=True)
class Vote:
    """A judgement in canonical slot terms, as the services store it after
    undoing the displayed order (canonical_vote). A pair's (task
    "pairwise"): choice "1", "2" or "tie" and its per-slot answers as
    correct_1/2, grade_1/2. Best of N: choice the slot picked ("1".."9") or
    "none". A ranking: choice "" and `ranks`, one per slot 1..N (ties share a
    rank), per-slot labels in slot_correct / slot_grades where the domain
    asks. The compare page and the REST API ask them as DisplayedVote by
    displayed position (canonical_slot_vote)."""

    choice: str  # pairwise "1", "2" or "tie"; best of N a slot or "none"; ranking ""
    correct_1: str = ""
    correct_2: str = ""
    # Graded projects: the signed strength oriented to response 1
    # (annotate.loop.scales); `choice` is then its sign.
    strength: int | None = None
    grade_1: str = ""
    grade_2: str = ""
    confidence: int | None = None
    rationale: str = ""
    active_seconds: float = 0.0
    flagged_problem: bool = False
    problem_reason: str = ""
    task: str = "pairwise"  # annotate.models.Task
    ranks: tuple[int, ...] = ()  # a ranking's rank of slot 1, 2, … N
    # N-slot tasks, where the domain asks: a label / grade per slot 1..N
    # ("" for none), the pair's correct_1/2 and grade_1/2 staying empty.
    slot_correct: tuple[str, ...] = ()
    slot_grades: tuple[str, ...] = ()


@dataclass(frozen=True)
class DisplayedVote:
    """A pair's answer as the annotator gave it, in displayed terms (left /
    right, a strength oriented to the left response): what the compare page
    and the REST API hand to the services, which map it to a Vote with the
    assignment's display order once they hold its lock (canonical_vote)."""

    choice: str = ""  # "left", "right", "tie" ("" with a graded strength)
    correct_left: str = ""
    correct_right: str = ""
    strength: int | None = None
    grade_left: str = ""
    grade_right: str = ""
    confidence: int | None = None
    rationale: str = ""
    active_seconds: float = 0.0
    flagged_problem: bool = False
    problem_reason: str = ""
    # Best of N and rankings (task "best_of_n" / "ranking"), all by displayed
    # position 1..N (1 = shown first): `pick` the position picked ("1".."9")
    # or "none"; `ranks` the rank given to each position; `slot_correct` and
    # `slot_grades` each position's label / grade where the domain asks.
    task: str = "pairwise"
    pick: str = ""
    ranks: tuple[int, ...] = ()
    slot_correct: tuple[str, ...] = ()
    slot_grades: tuple[str, ...] = ()


class _Project(Protocol):
    @property
    def allow_tie(self) -> bool: ...
    @property
    def require_rationale(self) -> bool: ...
    @property
    def preference_scale(self) -> str: ...


class _Domain(Protocol):
    @property
    def is_correctness(self) -> bool: ...
    @property
    def asks_grade(self) -> bool: ...


def validate_vote(vote: Vote, *, project: _Project, domain: _Domain) -> None:
    """Raise JudgementInvalid (messages by canonical field name) unless `vote`
    is one the project and the item's domain accept."""
    errors: dict[str, str] = {}
    points = scales.POINTS.get(project.preference_scale)
    if points is not None:
        if vote.strength is None:
            errors["strength"] = "Choose a point on the scale."
        elif vote.strength not in points or vote.choice != scales.choice_of(vote.strength):
            errors["strength"] = "Not a point of this project's scale."
    elif vote.strength is not None:
        errors["strength"] = "This project does not use a graded scale."
    elif vote.choice not in CHOICES:
        errors["choice"] = "Choose the better response."
    elif vote.choice == TIE and not project.allow_tie:
        errors["choice"] = "This project does not allow ties."
    if domain.asks_grade:
        for name in ("grade_1", "grade_2"):
            if getattr(vote, name) not in GRADES:
                errors[name] = "Give this response a grade (A, B or C)."
    elif vote.grade_1 or vote.grade_2:
        errors["grade_1"] = "Grades are not asked in this domain."
    if domain.is_correctness:
        for name in ("correct_1", "correct_2"):
            if getattr(vote, name) not in LABELS:
                errors[name] = "Say whether this response is correct."
    elif vote.correct_1 or vote.correct_2:
        errors["correct_1"] = "Correctness is not asked in this domain."
    if vote.confidence is not None and not 1 <= vote.confidence <= 3:
        errors["confidence"] = "Confidence is 1, 2 or 3."
    if not vote.rationale.strip():
        if vote.choice == TIE:
            errors["rationale"] = "Explain why the responses are equally good."
        elif project.require_rationale:
            errors["rationale"] = "This project asks for a short rationale."
    if vote.flagged_problem and not vote.problem_reason.strip():
        errors["problem_reason"] = "Say what is wrong with the item."
    if vote.active_seconds < 0 or vote.active_seconds != vote.active_seconds:
        errors["active_seconds"] = "Must be a non-negative number."
    if errors:
        raise JudgementInvalid(errors)


def vote_fields(vote: Vote) -> dict[str, Any]:
    """The Judgement fields a vote sets, cleaned as they are stored (its
    per-slot answers are slot_answers())."""
    return {
        "task": vote.task,
        "choice": vote.choice,
        "strength": vote.strength,
        "confidence": vote.confidence,
        "rationale": vote.rationale.strip(),
        "active_seconds": vote.active_seconds,
        "flagged_problem": vote.flagged_problem,
        "problem_reason": vote.problem_reason.strip()[:500],
    }


# A JudgementSlot row's values, in this order.
SLOT_ANSWER_FIELDS = ("slot", "correctness", "grade", "rank")


def slot_answers(vote: Vote) -> list[tuple[int, str, str, int | None]]:
    """The JudgementSlot rows of a vote, (slot, correctness, grade, rank) in
    slot order: one for each slot that got an answer, none for the others
    (not asked)."""
    if vote.task in N_SLOT_TASKS:
        n = max(len(vote.ranks), len(vote.slot_correct), len(vote.slot_grades))
        rows = []
        for slot in range(1, n + 1):
            rank = vote.ranks[slot - 1] if slot <= len(vote.ranks) else None
            label = vote.slot_correct[slot - 1] if slot <= len(vote.slot_correct) else ""
            grade = vote.slot_grades[slot - 1] if slot <= len(vote.slot_grades) else ""
            if rank is not None or label or grade:
                rows.append((slot, label, grade, rank))
        return rows
    answers = ((1, vote.correct_1, vote.grade_1), (2, vote.correct_2, vote.grade_2))
    return [(slot, label, grade, None) for slot, label, grade in answers if label or grade]


# --- Answers over N slots (best of N, rankings) ------------------------------------------

BEST_OF_N = "best_of_n"
RANKING = "ranking"
N_SLOT_TASKS = (BEST_OF_N, RANKING)
NONE_PICKED = "none"


def is_competition_ranking(ranks: tuple[int, ...]) -> bool:
    """Whether `ranks` (one per slot) rank the slots with ties as sports do
    ("1224"): each rank is one more than the number of slots ranked above."""
    return all(rank == 1 + sum(1 for other in ranks if other < rank) for rank in ranks)


def validate_slot_vote(
    vote: Vote, *, n_slots: int, domain: _Domain | None = None, allow_none: bool = True
) -> None:
    """Raise JudgementInvalid unless `vote` is a valid best-of-N pick or
    ranking over an item of `n_slots` response slots (in canonical terms),
    with a correctness label / grade for every slot where the `domain` asks
    them (none where it does not; no domain: none asked). "None is
    acceptable" only where the project allows it (`allow_none`)."""
    errors: dict[str, str] = {}
    if vote.task == BEST_OF_N:
        if vote.choice == NONE_PICKED and not allow_none:
            errors["choice"] = "Pick one of the responses: this project has no “none” answer."
        elif vote.choice != "none" and vote.choice not in {str(s) for s in range(1, n_slots + 1)}:
            errors["choice"] = "Pick one of the responses, or none of them."
        if vote.ranks:
            errors["ranks"] = "A best-of-N vote picks one response; it ranks none."
    elif vote.task == RANKING:
        if vote.choice:
            errors["choice"] = "A ranking has no single choice."
        if len(vote.ranks) != n_slots:
            errors["ranks"] = f"Rank each of the {n_slots} responses."
        elif not is_competition_ranking(vote.ranks):
            errors["ranks"] = "Ranks run from 1 with ties sharing one (e.g. 1, 2, 2, 4)."
    else:
        errors["task"] = f"Not a task over N responses: {vote.task!r}."
    if vote.strength is not None:
        errors["strength"] = "Only a pair's vote has a strength."
    if vote.correct_1 or vote.correct_2 or vote.grade_1 or vote.grade_2:
        errors["correct_1"] = "An N-response vote gives its labels per slot (slot_correct)."
    _check_slot_labels(vote, n_slots=n_slots, domain=domain, errors=errors)
    if vote.confidence is not None and not 1 <= vote.confidence <= 3:
        errors["confidence"] = "Confidence is 1, 2 or 3."
    if vote.flagged_problem and not vote.problem_reason.strip():
        errors["problem_reason"] = "Say what is wrong with the item."
    if vote.active_seconds < 0 or vote.active_seconds != vote.active_seconds:
        errors["active_seconds"] = "Must be a non-negative number."
    if errors:
        raise JudgementInvalid(errors)


_SLOT_LABELS = {  # field: (the domain's flag, valid values, message of a slot without one)
    "slot_correct": ("is_correctness", LABELS, "Say whether response {} is correct."),
    "slot_grades": ("asks_grade", GRADES, "Give response {} a grade (A, B or C)."),
}


def _check_slot_labels(vote: Vote, *, n_slots: int, domain, errors: dict[str, str]) -> None:
    """Per-slot correctness and grades: a valid answer for every slot where
    the domain asks (each slot without one named), none where it does not."""
    for field, (flag, valid, missing) in _SLOT_LABELS.items():
        given = getattr(vote, field)
        if domain is None or not getattr(domain, flag):
            if any(given):
                errors[field] = "Not asked in this domain."
            continue
        padded = tuple(given) + ("",) * (n_slots - len(given))
        if len(padded) != n_slots:
            errors[field] = f"One answer for each of the {n_slots} responses."
            continue
        for slot, value in enumerate(padded, start=1):
            if value not in valid:
                errors[f"{field}_{slot}"] = missing.format(slot)


def canonical_per_slot(displayed: tuple, *, order: str) -> tuple:
    """Anything given per displayed position (a rank, a label), per canonical
    slot 1..N (ValueError unless one per position)."""
    if len(displayed) != len(order):
        raise ValueError("one value per displayed response")
    by_slot = {int(slot): value for slot, value in zip(order, displayed, strict=True)}
    return tuple(by_slot[slot] for slot in range(1, len(order) + 1))


def competition_ranks(ranks: tuple[int, ...]) -> tuple[int, ...]:
    """Any ranks (lower is better; equal values tie) as a competition
    ranking with the same order: each rank one more than the number of
    responses strictly better ("1, 1, 2" -> "1, 1, 3")."""
    return tuple(1 + sum(1 for other in ranks if other < rank) for rank in ranks)


def canonical_slot_vote(vote: DisplayedVote, *, order: str) -> Vote:
    """A best-of-N pick or a ranking given by displayed position, in
    canonical slot terms with the assignment's display `order`. What is
    malformed (a position out of range, the wrong number of ranks) passes
    through as something validate_slot_vote refuses, with its message."""
    n = len(order)
    positions = {str(p): order[p - 1] for p in range(1, n + 1)}
    choice = ""
    if vote.task == BEST_OF_N:
        choice = NONE_PICKED if vote.pick == NONE_PICKED else positions.get(vote.pick, "?")

    def per_slot(values: tuple, empty) -> tuple:
        if not values:
            return ()
        if len(values) != n:
            return tuple(values) + (empty,) * (n + 1)  # the wrong length, refused
        return canonical_per_slot(tuple(values), order=order)

    return Vote(
        choice=choice,
        task=vote.task,
        ranks=per_slot(vote.ranks, 0),
        slot_correct=per_slot(vote.slot_correct, ""),
        slot_grades=per_slot(vote.slot_grades, ""),
        confidence=vote.confidence,
        rationale=vote.rationale,
        active_seconds=vote.active_seconds,
        flagged_problem=vote.flagged_problem,
        problem_reason=vote.problem_reason,
    )


class _Revisable(Protocol):
    @property
    def votes_needed(self) -> int: ...
    @property
    def n_votes(self) -> int: ...

    @property
    def project(self) -> Any: ...


def can_revise(item: _Revisable) -> bool:
    """Votes can be revised while the item still waits for the votes every
    item gets (the project's votes per item); once it has had them, the
    verdict is decided from them, and Revise stays gone even if the item is
    escalated for more votes: offering it again would tell the annotator
    that the others disagreed (votes are blind). `item.project` is loaded.
    A check item (issue 36) is revisable as a benchmark item still waiting
    for votes is: never closing it is what keeps checks indistinguishable."""
    if getattr(item, "purpose", "benchmark") == "check":
        return True
    return item.n_votes < min(item.votes_needed, item.project.votes_per_item)


_TALLY = {"1": "votes_1", "2": "votes_2", TIE: "votes_tie"}
N_SLOT_TALLY = "votes_ranked"


class _Labelled(Protocol):
    @property
    def choice(self) -> str: ...
    @property
    def correct_1(self) -> str: ...
    @property
    def correct_2(self) -> str: ...


def tally_columns(vote: _Labelled) -> list[str]:
    """The Item tally columns one vote (or judgement) counts in: a pair's
    choice and each correctness label it gives (Item.correct_<response>_<label>);
    a best-of-N pick's or a ranking's votes_ranked alone."""
    if getattr(vote, "task", "pairwise") in N_SLOT_TASKS:
        # A pick or a ranking counts as one vote (its answer is on its slots):
        # votes_ranked, never a pair's choice or label tally.
        return [N_SLOT_TALLY]
    columns = [_TALLY[vote.choice]]
    for response, label in (("1", vote.correct_1), ("2", vote.correct_2)):
        if label:
            columns.append(f"correct_{response}_{label}")
    return columns


def tally_delta(*, new: _Labelled, old: _Labelled | None = None) -> dict[str, int]:
    """How each tally column moves when `new` replaces `old` (a revision) or
    is counted afresh; columns that do not move are left out."""
    delta: Counter[str] = Counter(tally_columns(new))
    if old is not None:
        delta.subtract(tally_columns(old))
    return {column: n for column, n in delta.items() if n}


# --- What was displayed <-> canonical terms -----------------------------------------------


def draw_order(n_slots: int, rng: Any) -> str:
    """A display order for an item of `n_slots` response slots, drawn on the
    server from `rng` (random.Random's interface): uniform over the
    permutations. A pair takes one draw, response 2 first below 0.5."""
    if not 2 <= n_slots <= MAX_SLOTS:
        raise ValueError(f"an item has 2 to {MAX_SLOTS} response slots, not {n_slots}")
    if n_slots == 2:
        return PAIR_ORDERS[1] if rng.random() < 0.5 else PAIR_ORDERS[0]
    slots = [str(slot) for slot in range(1, n_slots + 1)]
    rng.shuffle(slots)
    return "".join(slots)


def is_order(order: str, n_slots: int | None = None) -> bool:
    """Whether `order` is a display order: a permutation of the slots 1..N
    (N = `n_slots` when given), one digit each."""
    n = len(order)
    if n_slots is not None and n != n_slots:
        return False
    return 2 <= n <= MAX_SLOTS and sorted(order) == [str(s) for s in range(1, n + 1)]


def displayed_slots(order: str) -> tuple[int, ...]:
    """The canonical slot displayed at each position, first to last."""
    return tuple(int(slot) for slot in order)


def is_swapped(order: str) -> bool:
    """A pair's display order in the left/right terms of the functions
    below: True when response 2 was displayed on the left."""
    if order not in PAIR_ORDERS:
        raise ValueError(f"not the display order of a pair: {order!r}")
    return order == PAIR_ORDERS[1]


def response_on(side: str, *, swapped: bool) -> str:
    """The canonical response ("1"/"2") displayed on `side` ("left"/"right")."""
    if side not in SIDES:
        raise ValueError(f"unknown side {side!r}")
    return "2" if (side == "left") == swapped else "1"


def side_of(response: str, *, swapped: bool) -> str:
    """The side ("left"/"right") canonical `response` ("1"/"2") was displayed on."""
    return "left" if response_on("left", swapped=swapped) == response else "right"


def canonical_choice(choice: str, *, swapped: bool) -> str:
    """A displayed choice ("left", "right", "tie") in canonical terms ("" stays
    "": no choice made, which validate_vote refuses)."""
    if choice in (TIE, ""):
        return choice
    return response_on(choice, swapped=swapped)


def canonical_strength(strength: int | None, *, swapped: bool) -> int | None:
    """A displayed strength (oriented to the left response) oriented to
    response 1, and back: the swap is a change of sign."""
    if strength is None:
        return None
    return -strength if swapped else strength


def displayed_choice(choice: str, *, swapped: bool) -> str:
    """A canonical choice ("1", "2", "tie") as it was displayed."""
    return TIE if choice == TIE else side_of(choice, swapped=swapped)


def displayed_pair(first: Any, second: Any, *, swapped: bool) -> tuple[Any, Any]:
    """(left, right): what belongs to response 1 and response 2, in the order
    they were displayed (their texts, their rendered HTML)."""
    return (second, first) if swapped else (first, second)


def choice_contradiction(choice: str, strength: int | None) -> str:
    """Why a displayed `choice` ("left", "right", "tie") sent beside a graded
    `strength` (oriented to the left response) contradicts it, or "" when it
    does not (or either is missing). A graded vote's side is its strength's
    sign; a client that says otherwise is told so, not silently corrected."""
    if not choice or strength is None:
        return ""
    side = "left" if strength > 0 else "right" if strength < 0 else TIE
    if choice == side:
        return ""
    return (
        f"The choice {choice!r} contradicts the strength {strength}, which says {side!r}: "
        "send the strength alone, or with the choice it implies."
    )


def canonical_vote(vote: DisplayedVote, *, order: str) -> Vote:
    """The Vote of an answer given in displayed terms, for an assignment whose
    display order is `order` (a pair's). A graded answer gives `strength`
    (oriented to the left response); its collapsed choice comes from it. (A
    `choice` sent with it that says otherwise is refused before this, by the
    form and the API: choice_contradiction.) A best-of-N or ranking answer
    maps by position (canonical_slot_vote)."""
    if vote.task in N_SLOT_TASKS:
        return canonical_slot_vote(vote, order=order)
    swapped = is_swapped(order)
    # (The swap is its own inverse: displayed_pair turns (left, right) back
    # into (response 1, response 2).)
    correct_1, correct_2 = displayed_pair(vote.correct_left, vote.correct_right, swapped=swapped)
    grade_1, grade_2 = displayed_pair(vote.grade_left, vote.grade_right, swapped=swapped)
    canonical = canonical_strength(vote.strength, swapped=swapped)
    return Vote(
        choice=(
            canonical_choice(vote.choice, swapped=swapped)
            if canonical is None
            else scales.choice_of(canonical)
        ),
        correct_1=correct_1,
        correct_2=correct_2,
        strength=canonical,
        grade_1=grade_1,
        grade_2=grade_2,
        confidence=vote.confidence,
        rationale=vote.rationale,
        active_seconds=vote.active_seconds,
        flagged_problem=vote.flagged_problem,
        problem_reason=vote.problem_reason,
    )


def displayed_answer(judgement: _Labelled, *, swapped: bool) -> dict[str, Any]:
    """A stored judgement's choice, correctness labels, strength and grades
    as they were displayed: choice, correct_left, correct_right, strength
    (oriented to the left response, None on an A/B vote), grade_left,
    grade_right."""
    correct_left, correct_right = displayed_pair(
        judgement.correct_1, judgement.correct_2, swapped=swapped
    )
    grade_left, grade_right = displayed_pair(
        getattr(judgement, "grade_1", ""), getattr(judgement, "grade_2", ""), swapped=swapped
    )
    return {
        "choice": displayed_choice(judgement.choice, swapped=swapped),
        "correct_left": correct_left,
        "correct_right": correct_right,
        "strength": canonical_strength(getattr(judgement, "strength", None), swapped=swapped),
        "grade_left": grade_left,
        "grade_right": grade_right,
    }


def displayed_field(name: str, *, swapped: bool) -> str:
    """A canonical field name in displayed terms (correct_1 -> correct_left
    or correct_right, grade_2 -> grade_left or grade_right); any other name
    unchanged."""
    if name in ("correct_1", "correct_2"):
        return "correct_" + side_of(name[-1], swapped=swapped)
    if name in ("grade_1", "grade_2"):
        return "grade_" + side_of(name[-1], swapped=swapped)
    return name


def displayed_errors(errors: dict[str, str], *, order: str) -> dict[str, str]:
    """validate_vote's messages (by canonical field name) by the field names
    the annotator saw, for an assignment displayed in `order`: a pair's
    left/right; an N-slot vote's by displayed position (choice -> pick,
    slot_correct_<slot> -> slot_correct_<position>), its messages naming
    the response by the letter shown."""
    if len(order) != 2 or any(
        name == "ranks" or name.startswith("slot_") or name == "pick" for name in errors
    ):
        return displayed_slot_errors(errors, order=order)
    swapped = is_swapped(order)
    return {displayed_field(name, swapped=swapped): message for name, message in errors.items()}


# How the pages name displayed positions 1..N (also the compare page's letters).
POSITION_NAMES = "ABCDEFGHI"


def displayed_slot_errors(errors: dict[str, str], *, order: str) -> dict[str, str]:
    """validate_slot_vote's messages by displayed field name (see displayed_errors)."""
    shown: dict[str, str] = {}
    for name, message in errors.items():
        if name == "choice":
            shown["pick"] = message
            continue
        head, _, slot = name.rpartition("_")
        if head in ("slot_correct", "slot_grades") and slot.isdecimal() and slot in order:
            position = order.index(slot) + 1
            letter = POSITION_NAMES[position - 1]
            shown[f"{head}_{position}"] = message.replace(f"response {slot}", f"response {letter}")
            continue
        shown[name] = message
    return shown
