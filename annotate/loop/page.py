"""The compare page: what it shows of an assignment (the #work element, a
whole page or the fragment htmx swaps in), with its progress line, the keys
it acts on and the errors of a refused vote, in displayed terms
(annotate.loop.rules)."""

import functools

from django.db import connection
from django.db.models import Count, F, IntegerField, Max, Q, Subquery, Sum
from django.db.models.functions import Least
from django.shortcuts import render
from django.urls import reverse
from django.utils.safestring import mark_safe

from annotate.loop import rules, scales
from annotate.loop.forms import JudgementForm
from annotate.loop.groups import group_place

# (The keys moved to annotate.loop.keys; importable from here as before.)
from annotate.loop.keys import GRADE_KEYS, PICTURE_KEYS, _keymap, vote_keys  # noqa: F401
from annotate.loop.service import can_revise
from annotate.models import (
    Assignment,
    AssignmentStatus,
    Item,
    Judgement,
    Membership,
    ProgressCounter,
    Project,
    Task,
    item_votes,
    parts_by_slot,
    response_slot,
    shown_parts,
    submitted_count,
)
from annotate.models.parts import is_mrb_shaped, response_slots


def reference_progress(project: Project, user) -> dict:
    """The progress figures aggregated over every item of the project: what
    the counters (annotate.models.progress) must always equal. Tests only:
    its cost grows with the project."""
    mine = Assignment.objects.filter(annotator=user)
    judged = Membership.objects.filter(project=project, user=user).values("judged")
    return Item.objects.filter(project=project).aggregate(
        needed=Sum("votes_needed"),
        collected=Sum(
            Least(item_votes(), F("votes_needed")),
            output_field=IntegerField(),
        ),
        held=Count(
            "pk", filter=Q(pk__in=mine.filter(status=AssignmentStatus.OPEN).values("item_id"))
        ),
        open=Count(
            "pk",
            filter=Q(live_assignments__lt=F("votes_needed")) & ~Q(pk__in=mine.values("item_id")),
        ),
        # aggregate() takes only aggregates: the Max of the one value the
        # subquery gives (evaluated once), None without a membership (or in a
        # project without items).
        judged=Max(Subquery(judged)),
    )


# reference_progress's figures in one statement whose cost does not grow
# with the project: its counter rows (annotate.models.ProgressCounter, kept by
# the database in every item change's transaction), the user's own
# assignments there and their Membership.judged. Raw SQL, the same text on
# SQLite and PostgreSQL, built once: compiling the same as a QuerySet (an
# aggregate over two counting subqueries) cost more CPU than the whole claim
# of the next item (py-spy on the embedded default, issue 32).
# tests/annotate/loop/test_progress_counters.py holds it equal to
# reference_progress over random sequences of claims, votes, skips, expiries
# and bulk writes, and shows it the same statement at 100 and 100,000 items.
# `mine` names the annotator alone in its WHERE: the plan starts from the
# user's assignments (their index) and reaches each item by its key, never
# from the project's items (an item predicate in the WHERE let SQLite start
# from the claim index: every item still short of leases).
_COUNTER, _ASSIGNMENT = ProgressCounter._meta.db_table, Assignment._meta.db_table
_ITEM, _MEMBERSHIP = Item._meta.db_table, Membership._meta.db_table
PROGRESS_SQL = f"""
    WITH counters AS (
        SELECT SUM(c.needed) AS needed, SUM(c.collected) AS collected,
               SUM(c.unfilled) AS unfilled
        FROM {_COUNTER} c WHERE c.project_id = %(project)s
    ), mine AS (
        SELECT COUNT(*) FILTER (WHERE i.project_id = %(project)s AND a.status = %(open)s)
                   AS held,
               COUNT(*) FILTER (
                   WHERE i.project_id = %(project)s AND i.live_assignments < i.votes_needed)
                   AS given
        FROM {_ASSIGNMENT} a INNER JOIN {_ITEM} i ON i.id = a.item_id
        WHERE a.annotator_id = %(user)s
    )
    SELECT counters.needed, counters.collected, counters.unfilled, mine.held, mine.given,
           (SELECT m.judged FROM {_MEMBERSHIP} m
            WHERE m.project_id = %(project)s AND m.user_id = %(user)s)
    FROM counters CROSS JOIN mine
"""


def _project_progress(project: Project, user) -> dict:
    """reference_progress's figures (PROGRESS_SQL). Read afresh on every
    page: right after each vote."""
    with connection.cursor() as cursor:
        cursor.execute(
            PROGRESS_SQL, {"project": project.pk, "user": user.pk, "open": AssignmentStatus.OPEN}
        )
        needed, collected, unfilled, held, given, judged = cursor.fetchone()
    return {
        "needed": needed,
        "collected": collected,
        "held": held or 0,
        "open": (unfilled or 0) - (given or 0),
        "judged": judged,
    }


def progress(project: Project, user) -> dict:
    """The progress line: the annotator's own count (Membership.judged, kept
    by every submit), what is left for them, and the project's votes."""
    totals = _project_progress(project, user)
    collected, needed = totals["collected"] or 0, totals["needed"] or 0
    judged = totals["judged"]
    if judged is None:
        # An admin judging without a membership: counted from the rows.
        judged = submitted_count(project_id=project.pk, user_id=user.pk)
    return {
        "mine": judged,
        "left": totals["held"] + totals["open"],
        "project_percent": round(100 * collected / needed, 1) if needed else 0,
        "collected": collected,
        "needed": needed,
    }


# The compare form's radio buttons, as the template writes them (values as
# strings, the empty "not answered" choice left out).
CORRECTNESS_CHOICES = [
    (str(v), label) for v, label in JudgementForm.base_fields["correct_left"].choices if v
]
CONFIDENCE_CHOICES = [
    (str(v), label) for v, label in JudgementForm.base_fields["confidence"].choices
]
FRESH_CONFIDENCE = "2"

# The fields the compare page shows, in page order, with the id of the element
# an error about each points to (the first of a radio group); the skip
# form's reason is "skip"; anything else is about the whole form.
ERROR_TARGETS = {
    "form": None,
    "correct_left": "correct_left-yes",
    "correct_right": "correct_right-yes",
    "choice": "choice-left",
    "strength": "strength-1",
    "grade_left": "grade_left-A",
    "grade_right": "grade_right-A",
    "confidence": "confidence-1",
    "rationale": "rationale",
    "problem_reason": "problem_reason",
    "skip": "skip-reason",
}
SHOWN_VALUES = (
    "choice",
    "strength",
    "grade_left",
    "grade_right",
    "correct_left",
    "correct_right",
    "rationale",
    "flagged_problem",
    "problem_reason",
)


# The service's message for a missing correctness label, said instead with
# the domain's own question and the response it is about.
MISSING_LABEL = "Say whether this response is correct."
MISSING_GRADE = "Give this response a grade (A, B or C)."


def _form_errors(form, skip_form, domain) -> dict[str, list[str]]:
    """Error messages by where the page shows them (ERROR_TARGETS' keys)."""
    errors: dict[str, list[str]] = {}
    if form is not None:
        for name, messages_ in form.errors.items():
            where = name if name in ERROR_TARGETS else "form"
            if name in ("correct_left", "correct_right"):
                question = domain.question_for("A" if name == "correct_left" else "B")
                messages_ = [f"Answer “{question}”" if m == MISSING_LABEL else m for m in messages_]
            if name in ("grade_left", "grade_right"):
                question = domain.grade_question_for("A" if name == "grade_left" else "B")
                messages_ = [
                    f"Answer “{question}” (A, B or C)" if m == MISSING_GRADE else m
                    for m in messages_
                ]
            errors.setdefault(where, []).extend(messages_)
    if skip_form is not None and skip_form.errors:
        for messages_ in skip_form.errors.values():
            errors.setdefault("skip", []).extend(messages_)
    return errors


def _error_summary(errors: dict[str, list[str]]) -> list[tuple[str | None, str]]:
    """(element id or None, message) in page order, for the summary that the
    page announces and whose links move to each field."""
    return [
        (ERROR_TARGETS[where], message)
        for where in ERROR_TARGETS
        for message in errors.get(where, ())
    ]


def render_work(
    request,
    assignment: Assignment,
    form=None,
    skip_form=None,
    status=200,
    return_to: str = "",
    notice: str = "",
    page: dict | None = None,
):
    """The compare page for the annotator's `assignment` (htmx: the #work
    fragment alone), with what a refused vote or skip (`form`, `skip_form`)
    got wrong, answered with `status`. `page`: another page's URLs, progress
    line and keys left out (the qualification's, annotate.qualification)."""
    item = assignment.item
    project = item.project
    domain = item.domain
    content = _content(item, assignment.display_order)
    layout = content["layout"]
    if layout == "slots":
        # (Imported here: annotate.loop.slots_page builds on this module.)
        from annotate.loop.slots_page import render_slots

        return render_slots(
            request, assignment, content, status, return_to, notice, form, skip_form
        )
    judgement = None
    if assignment.status == AssignmentStatus.SUBMITTED:
        judgement = assignment.judgements.with_pair_answers().get(is_current=True)
    shown_parts = content["shown"]
    input_parts = ()
    if layout == "edit":
        # The input image goes beside both results; the prompt's text stays on top.
        input_parts = [p for p in shown_parts["prompt"] if "image" in p]
        shown_parts["prompt"] = [p for p in shown_parts["prompt"] if "image" not in p]
    if form is None and judgement is not None:
        form = JudgementForm(initial=_displayed_initial(judgement, assignment))
    # A fresh item (the common case, after every submit) gets no form objects:
    # the template reads choices from constants and finds no values or errors.
    if form is not None:
        confidence = str(form["confidence"].value())
        values = {name: form[name].value() for name in SHOWN_VALUES}
    else:
        confidence, values = FRESH_CONFIDENCE, dict.fromkeys(SHOWN_VALUES)
    errors = _form_errors(form, skip_form, domain) if (form or skip_form) is not None else {}
    revisable = judgement is not None and can_revise(item)
    keymap = _keymap(
        allow_tie=project.allow_tie,
        domain_words=(
            (domain.correctness_question, domain.yes_label, domain.no_label)
            if domain.is_correctness
            else None
        ),
        judged=judgement is not None,
        can_revise=revisable,
        scale=project.preference_scale,
        grade_question=domain.grade_question if domain.asks_grade else None,
        layout=layout,
    )
    graded = scales.is_graded(project.preference_scale)
    responses = [
        {
            "side": side,
            "name": name,
            "hotkeys": () if graded else hotkeys,
            "html": response_html,
            "question": domain.question_for(name),
            "field": f"correct_{side}",
            "choices": _correctness_choices(domain.yes_label, domain.no_label, keys),
            "value": values.get(f"correct_{side}"),
            "errors": errors.get(f"correct_{side}"),
            "grade_question": domain.grade_question_for(name),
            "grade_field": f"grade_{side}",
            "grade_choices": tuple(zip(rules.GRADES, GRADE_KEYS[side], strict=True)),
            "grade_value": values.get(f"grade_{side}"),
            "grade_errors": errors.get(f"grade_{side}"),
            "parts": shown_parts[side] if shown_parts else None,
        }
        for side, name, hotkeys, response_html, keys in (
            ("left", "A", ("1", "←"), content["html"].get("left"), "qwe"),
            ("right", "B", ("2", "→"), content["html"].get("right"), "opu"),
        )
    ]
    context = {
        "prompt_html": content["html"].get("prompt"),
        "prompt_image": content["prompt_image"],
        "prompt_parts": shown_parts["prompt"] if shown_parts else None,
        "layout": layout,
        "input_parts": input_parts,
        "responses": responses,
        "judgement": judgement,
        "can_revise": revisable,
        "values": values,
        # Every place the template looks, with its messages (most often none).
        "errors": {where: errors.get(where, ()) for where in ERROR_TARGETS},
        "error_summary": _error_summary(errors) if errors else (),
        "skip_errors": "skip" in errors,
        "scale_points": _scale_points(project.preference_scale) if graded else (),
        "strength": _shown_strength(values.get("strength")),
    }
    if layout == "clips":  # the transport's switch: flicker videos, or listen to A or B
        clips = [p for side in ("left", "right") for p in shown_parts[side]]
        context["clips_kind"] = "video" if any("video" in p for p in clips) else "audio"
    context.update(return_to=return_to, notice=notice, keymap=keymap, confidence=confidence)
    return render_page(request, assignment, context, status, skip_form, page=page)


def render_page(request, assignment, context: dict, status, skip_form, page=None):
    """The compare page of a layout's own `context` (the pair's above, the
    slots' in annotate.loop.slots_page: with its keymap and confidence) and
    what every layout shows: the assignment, the skip's reason, where the
    actions go and the progress line. Never cached."""
    item = assignment.item
    project = item.project
    context.update(
        project=project,
        assignment=assignment,
        item=item,
        domain=item.domain,
        skip_reason=(skip_form["reason"].value() or "") if skip_form is not None else "",
        actions=" ".join(action for action, _, _ in context["keymap"]),
        confidence_choices=CONFIDENCE_CHOICES,
        group_place=group_place(item, project.task),
    )
    if page is not None:  # another page's URLs and progress, without the keys it drops
        keymap = tuple(k for k in context["keymap"] if k[0] not in page.get("drop", ()))
        context.update(page, keymap=keymap, actions=" ".join(a for a, _, _ in keymap))
    else:
        context.update(
            submit_url=reverse("work_submit", args=[assignment.pk]),
            skip_url=reverse("work_skip", args=[assignment.pk]),
            undo_url=reverse("work_undo", args=[project.slug]),
            ahead_url=reverse("work_ahead", args=[project.slug]),
            progress=progress(project, request.user),
        )
    # htmx swaps in the #work element alone; the full page includes the same
    # template in the site's layout.
    template = "annotate/_work.html" if request.htmx else "annotate/work.html"
    response = render(request, template, context, status=status)
    response["Cache-Control"] = "no-store"
    return response


def _content(item, order: str) -> dict:
    """What the page shows of the item, read from its parts (one query), in
    the assignment's display `order`: the layout; for the MRB layout the
    prompt's image and the HTML of the prompt's and the displayed responses'
    one text part each (`shown` None); for a pair of any other shape the
    prompt's and the displayed left and right responses' parts as the
    template shows them (`html` empty); for more than two responses the
    "slots" layout (_slots_content). Never an ID, a model name or a source
    path (annotators must not see what could name a side)."""
    by_slot = parts_by_slot(item)
    slots = response_slots(by_slot)
    if len(slots) != 2 or item.project.task != Task.PAIRWISE:
        return _slots_content(by_slot, len(slots), order)
    left, right = rules.displayed_pair(
        by_slot["response_1"], by_slot["response_2"], swapped=rules.is_swapped(order)
    )
    if is_mrb_shaped(by_slot):
        image, prompt = by_slot["prompt"]
        # Only ItemPart.render_html() writes part HTML, and its output is sanitised.
        html = {"prompt": prompt.html, "left": left[0].html, "right": right[0].html}
        return {
            "layout": "image_prompt",
            "shown": None,
            "prompt_image": image.image,
            "html": {key: mark_safe(value) for key, value in html.items()},
        }
    shown = {
        "prompt": shown_parts(by_slot["prompt"], "Prompt"),
        "left": shown_parts(left, "Response A"),
        "right": shown_parts(right, "Response B"),
    }
    return {"layout": _layout(shown), "shown": shown, "prompt_image": None, "html": {}}


# How the page names displayed responses, first to last (rules.MAX_SLOTS of them).
RESPONSE_NAMES = "ABCDEFGHI"


def _slots_content(by_slot: dict, n: int, order: str) -> dict:
    """An item of n != 2 responses (a best-of-N or ranking project's): the
    prompt's parts and each response's, named A, B, C, … in the display
    order (canonical order if the assignment's order is not one of n slots)."""
    shown_order = rules.displayed_slots(order) if rules.is_order(order, n) else range(1, n + 1)
    responses = [
        {
            "name": RESPONSE_NAMES[k],
            "parts": shown_parts(
                by_slot.get(response_slot(slot), []), f"Response {RESPONSE_NAMES[k]}"
            ),
        }
        for k, slot in enumerate(shown_order)
    ]
    shown = {"prompt": shown_parts(by_slot["prompt"], "Prompt"), "responses": responses}
    return {"layout": "slots", "shown": shown, "prompt_image": None, "html": {}}


def _layout(shown: dict[str, list[dict]]) -> str:
    """How the page lays out an item of another shape than MRB's (whose
    layout is "image_prompt": one prompt image in the viewer, text responses):
    "pictures" (both responses pictures alone: side by side
    at one scale, zoomed together, flickered); "edit" (the same, and the
    prompt holds an image: the input beside both results); "parts" (text
    and pictures in order, the pictures zoomed together); "text" (parts
    without a picture)."""

    def pictures_alone(parts):
        return bool(parts) and all("image" in p for p in parts)

    # A response holds a video or audio file: "clips" (one transport plays,
    # seeks and steps both responses: static/js/clips.js; issue 35).
    if any("video" in p or "audio" in p for side in ("left", "right") for p in shown[side]):
        return "clips"

    if pictures_alone(shown["left"]) and pictures_alone(shown["right"]):
        return "edit" if any("image" in p for p in shown["prompt"]) else "pictures"
    if any("image" in p for slot in ("prompt", "left", "right") for p in shown[slot]):
        return "parts"
    return "text"


@functools.cache
def _correctness_choices(
    yes_label: str, no_label: str, keys: str
) -> tuple[tuple[str, str, str], ...]:
    """The correctness radios in the domain's words (stored as yes/no/unsure),
    each with its key (one letter of `keys`)."""
    words = {"yes": yes_label, "no": no_label}
    return tuple(
        (value, words.get(value, label), key)
        for (value, label), key in zip(CORRECTNESS_CHOICES, keys, strict=True)
    )


@functools.cache
def _scale_points(scale: str) -> tuple[tuple[int, str, str], ...]:
    """The graded scale's radios in displayed order: (key, strength oriented
    to the left response as the form posts it, label)."""
    return tuple(
        (n, str(strength), scales.point_label(strength))
        for n, strength in enumerate(scales.POINTS[scale], start=1)
    )


def _shown_strength(value) -> str:
    """The form's strength as the radios' values are written ("" for none)."""
    return "" if value in (None, "") else str(value)


def vote_tail_initial(judgement: Judgement) -> dict:
    """What every vote has beside its answer, as a stored judgement fills
    the form again (the pair's and the slots')."""
    return {
        "confidence": judgement.confidence,
        "rationale": judgement.rationale,
        "flagged_problem": judgement.flagged_problem,
        "problem_reason": judgement.problem_reason,
    }


def _displayed_initial(judgement: Judgement, assignment: Assignment) -> dict:
    return {
        **rules.displayed_answer(judgement, swapped=assignment.shown_swapped),
        **vote_tail_initial(judgement),
    }
