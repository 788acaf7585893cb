"""The compare page of an item shown as N responses (the "slots" layout of
annotate.loop.page): a best-of-N or ranking project's, with its vote by
displayed position (issue 33); a pairwise project's item of more than two
responses, shown without a vote (issue 32)."""

from __future__ import annotations

import functools

from annotate.loop import rules
from annotate.loop.forms import SlotVoteForm
from annotate.loop.keys import _keymap, vote_keys
from annotate.loop.page import (
    FRESH_CONFIDENCE,
    PICTURE_KEYS,
    _correctness_choices,
    render_page,
    vote_tail_initial,
)
from annotate.loop.service import can_revise
from annotate.models import AssignmentStatus, Judgement, Task

# The keys of an item of N responses whose project is pairwise (content32's
# "slots" layout: shown whole, no vote) and of every best-of-N or ranking
# item (the vote by position: _slots_keymap).
SLOTS_ACTIONS = ("skip", "undo", "guidelines", "keys", "close")

# Per-response answers by key (static/js/ranking.js): the answer's key, then
# the response's number (digits pick or place otherwise). Correctness as the
# pair page's left hand has it (y/n/u: yes, no, unsure); grades on the pair
# page's left-hand grade keys (z c v: A, B, C).
LABEL_KEYS = (("yes", "y"), ("no", "n"), ("unsure", "u"))
SLOT_GRADE_KEYS = dict(zip(rules.GRADES, "zcv", strict=True))


@functools.cache
def _slots_keymap(
    task: str,
    n: int,
    *,
    judged: bool,
    can_revise: bool,
    allow_none: bool = True,
    domain_words: tuple[str, str, str] | None = None,
    grade_question: str | None = None,
) -> tuple[tuple[str, tuple[str, ...], str], ...]:
    """(action, keys, meaning) of the compare page of a best-of-N or ranking
    item of `n` responses (named A, B, … in display order; digit k is the
    k-th shown): what the `?` panel lists and static/js/ranking.js acts on.
    `domain_words` (correctness question, yes and no labels) and
    `grade_question`: the domain's, where it asks them (LABEL_KEYS)."""
    last = str(n)
    if task == rules.BEST_OF_N:
        keys = [("pick", f"1…{last}", "Pick that response (1 = A, the first shown) as the best")]
        if allow_none:  # the project's setting (Project.allow_none_pick)
            keys.append(("pick-none", "0", "None of them is acceptable"))
    else:
        keys = [
            ("place", f"1…{last}", "Place that response next (1 = A, the first shown)"),
            ("tie-next", "=", "Tie: the next response you place shares the previous place"),
            (
                "take-back",
                "Backspace",
                "Take the last placement back (with none placed: undo your last vote)",
            ),
        ]
    then = f"then the response's number (1…{last})"
    if domain_words is not None:
        question, yes, no = domain_words
        q = question.replace("{response}", "the response")
        words = {"yes": yes, "no": no, "unsure": "Unsure"}
        keys += [(f"label-{v}", k, f"{q} {words[v]}: {k}, {then}") for v, k in LABEL_KEYS]
    if grade_question is not None:
        q = grade_question.replace("{response}", "the response")
        keys += [(f"grade-{g}", k, f"{q}: {g} — {k}, {then}") for g, k in SLOT_GRADE_KEYS.items()]
    keys += vote_keys(
        judged=judged, can_revise=can_revise, undo="Undo: back to your last vote, to change it"
    )
    keys += [
        ("guidelines", "g", "Guidelines"),
        ("keys", "?", "This list"),
        ("close", "Esc", "Close panels"),
    ]
    return tuple((action, tuple(k.split(" ")), meaning) for action, k, meaning in keys)


def clips_kind(responses) -> str:
    """ "video" or "audio" where a response holds a video or an audio file
    (the page then has the clips transport for every response), else ""."""
    parts = [part for response in responses for part in response.get("parts") or ()]
    if any("video" in part for part in parts):
        return "video"
    return "audio" if any("audio" in part for part in parts) else ""


def with_clip_keys(keymap):
    """A slots keymap with the clips transport's keys (static/js/clips.js):
    [ and ] set the speed, so confidence moves to { and }, as on the pair page."""
    keys = [
        (action, ("{", "}"), meaning) if action == "confidence" else (action, k, meaning)
        for action, k, meaning in keymap
    ]
    at = next((i for i, (action, _, _) in enumerate(keys) if action == "guidelines"), len(keys))
    clip = [(action, tuple(k.split(" ")), meaning) for action, k, meaning in PICTURE_KEYS["clips"]]
    return tuple(keys[:at] + clip + keys[at:])


def _slots_initial(judgement: Judgement, order: str) -> dict:
    """A stored pick or ranking as the slots form shows it (by position)."""
    rows = {row.slot: row for row in judgement.slots.all()}
    initial: dict = vote_tail_initial(judgement)
    if judgement.choice == rules.NONE_PICKED:
        initial["pick"] = rules.NONE_PICKED
    elif judgement.choice:
        initial["pick"] = str(order.index(judgement.choice) + 1)
    for position, slot in enumerate(rules.displayed_slots(order), start=1):
        row = rows.get(slot)
        if row is not None:
            initial[f"rank_{position}"] = row.rank
            initial[f"correct_{position}"] = row.correctness
            initial[f"grade_{position}"] = row.grade
    return initial


# Where the slots page shows messages not about one response.
SLOT_ERROR_PLACES = (
    "form",
    "pick",
    "ranks",
    "task",
    "confidence",
    "rationale",
    "problem_reason",
    "skip",
)


def _slot_errors(form, skip_form, n: int) -> tuple[dict[str, list[str]], list]:
    """The slots form's messages by field (positions named by letter) and
    the summary's (element id or None, message) in page order."""
    errors: dict[str, list[str]] = {}
    if form is not None:
        for name, messages_ in form.errors.items():
            for message in messages_:
                where = name
                if name == "__all__":
                    ranking = message == getattr(form, "rank_problem", "")
                    where = "ranks" if ranking else "form"
                errors.setdefault(where, []).append(message)
    if skip_form is not None and skip_form.errors:
        for messages_ in skip_form.errors.values():
            errors.setdefault("skip", []).extend(messages_)
    targets = {"form": None, "ranks": "rank_1", "pick": "pick-1", "task": None}
    for p in range(1, n + 1):
        targets[f"rank_{p}"] = f"rank_{p}"
        for field, prefix, first in (
            ("correct", "slot_correct", "yes"),
            ("grade", "slot_grades", "A"),
        ):
            targets[f"{field}_{p}"] = f"{field}_{p}-{first}"
            targets[f"{prefix}_{p}"] = f"{field}_{p}-{first}"
    targets.update(
        {
            "confidence": "confidence-1",
            "rationale": "rationale",
            "problem_reason": "problem_reason",
            "skip": "skip-reason",
        }
    )
    summary = [(targets.get(name), m) for name, messages_ in errors.items() for m in messages_]
    return errors, summary


def render_slots(request, assignment, content, status, return_to, notice, form, skip_form):
    """The compare page of an item shown as N responses in display order
    (named A, B, C, …). A best-of-N or ranking project's: its vote by
    position (SlotVoteForm; static/js/ranking.js adds the keys and drag and
    drop, the selects and radios work without it). A pairwise project's item
    of more than two responses: shown, no vote; the annotator may skip."""
    item = assignment.item
    project, domain = item.project, item.domain
    n = len(content["shown"]["responses"])
    votes = project.task != Task.PAIRWISE and rules.is_order(assignment.display_order, n)
    judgement = None
    if votes and assignment.status == AssignmentStatus.SUBMITTED:
        judgement = assignment.judgements.prefetch_related("slots").get(is_current=True)
    revisable = judgement is not None and can_revise(item)
    if votes:
        keymap = _slots_keymap(
            project.task,
            n,
            judged=judgement is not None,
            can_revise=revisable,
            allow_none=project.allow_none_pick,
            domain_words=(
                (domain.correctness_question, domain.yes_label, domain.no_label)
                if domain.is_correctness
                else None
            ),
            grade_question=domain.grade_question if domain.asks_grade else None,
        )
    else:
        keymap = tuple(
            entry
            for entry in _keymap(
                allow_tie=False,
                domain_words=None,
                judged=assignment.status == AssignmentStatus.SUBMITTED,
                can_revise=False,
            )
            if entry[0] in SLOTS_ACTIONS
        )
    if votes and form is None and judgement is not None:
        form = SlotVoteForm(
            initial=_slots_initial(judgement, assignment.display_order), task=project.task, n=n
        )
    kind = clips_kind(content["shown"]["responses"])
    if kind:
        keymap = with_clip_keys(keymap)
    errors, summary = _slot_errors(form, skip_form, n)

    def value(name):
        if form is None or name not in form.fields:
            return None
        got = form[name].value()
        return "" if got is None else str(got)

    responses = [
        {
            **response,
            "position": position,
            "rank": value(f"rank_{position}"),
            "correct": value(f"correct_{position}"),
            "grade": value(f"grade_{position}"),
            "correct_errors": errors.get(f"slot_correct_{position}", ())
            + tuple(errors.get(f"correct_{position}", ())),
            "grade_errors": errors.get(f"slot_grades_{position}", ())
            + tuple(errors.get(f"grade_{position}", ())),
            "question": domain.question_for(response["name"]),
            "grade_question": domain.grade_question_for(response["name"]),
        }
        for position, response in enumerate(content["shown"]["responses"], start=1)
    ]
    for response in responses:
        response["correct_errors"] = tuple(response["correct_errors"])
        response["grade_errors"] = tuple(response["grade_errors"])
    confidence = value("confidence") if form is not None else FRESH_CONFIDENCE
    context = {
        "layout": "slots",
        "clips_kind": kind,
        "task": project.task if votes else "",
        "n": n,
        "positions": [(p, rules.POSITION_NAMES[p - 1]) for p in range(1, n + 1)],
        "prompt_parts": content["shown"]["prompt"],
        "responses": responses,
        "judgement": judgement,
        "can_revise": revisable,
        "values": {
            "pick": value("pick"),
            "rationale": value("rationale"),
            "flagged_problem": bool(form is not None and form["flagged_problem"].value()),
            "problem_reason": value("problem_reason"),
        },
        "correctness_choices": _correctness_choices(domain.yes_label, domain.no_label, "   "),
        "grades": rules.GRADES,
        "errors": {where: tuple(errors.get(where, ())) for where in SLOT_ERROR_PLACES},
        "error_summary": summary,
        "skip_errors": "skip" in errors,
    }
    context.update(return_to=return_to, notice=notice, keymap=keymap, confidence=confidence)
    return render_page(request, assignment, context, status, skip_form)
