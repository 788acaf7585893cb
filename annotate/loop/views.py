"""The annotator's pages: the compare page, its htmx fragment, submit, skip,
undo, the history.
"""

import functools
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import (
    Count,
    Exists,
    F,
    IntegerField,
    Max,
    OuterRef,
    Prefetch,
    Q,
    Subquery,
    Sum,
)
from django.db.models.functions import Least
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.html import strip_tags
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from annotate.loop import rules
from annotate.loop.forms import JudgementForm, SkipForm
from annotate.loop.service import (
    COMPARE_PAGE_RELATED,
    AnnotationError,
    JudgementInvalid,
    can_revise,
    claim_ahead,
    claim_next_item,
    own_assignment_for_page,
    revise_judgement,
    skip_item,
    submit_and_claim_next,
    votes_may_come,
)
from annotate.models import (
    Assignment,
    AssignmentStatus,
    Item,
    Judgement,
    Membership,
    Project,
    submitted_count,
)
from annotate.projects import project_for

# --- Annotation ------------------------------------------------------------------------


def _assignment_for(request, assignment_id: int, related=COMPARE_PAGE_RELATED) -> Assignment:
    """The signed-in annotator's own assignment in a project they are a member
    of; anyone else's (or a removed member's) is a 404. With what the compare
    page shows (the default): annotate.loop.service.own_assignment_for_page."""
    if related == COMPARE_PAGE_RELATED:
        assignment = own_assignment_for_page(assignment_id=assignment_id, annotator=request.user)
    else:
        mine = Assignment.objects.own(request.user).filter(pk=assignment_id)
        # (select_related() without names would follow every foreign key.)
        assignment = (mine.select_related(*related) if related else mine).first()
    if assignment is None:
        raise Http404("No such assignment")
    return assignment


def _project_progress(project: Project, user) -> dict:
    """Votes collected and needed over the whole project, how many items are
    left for `user` (the ones they hold open, the one on screen included,
    and those they could still be given) and their Membership.judged, in
    one statement read afresh on every page: right after each vote, not a
    cached figure."""
    mine = Assignment.objects.filter(annotator=user)
    judged = Membership.objects.filter(project=project, user=user).values("judged")
    return Item.objects.filter(project=project).aggregate(
        needed=Sum("votes_needed"),
        collected=Sum(
            Least(F("votes_1") + F("votes_2") + F("votes_tie"), F("votes_needed")),
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


def _progress(project: Project, user) -> dict:
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
    "confidence": "confidence-1",
    "rationale": "rationale",
    "problem_reason": "problem_reason",
    "skip": "skip-reason",
}
SHOWN_VALUES = (
    "choice",
    "correct_left",
    "correct_right",
    "rationale",
    "flagged_problem",
    "problem_reason",
)


# The service's message for a missing correctness label, said instead with
# the domain's own question and the response it is about.
MISSING_LABEL = "Say whether this response is correct."


def _form_errors(form, skip_form, domain) -> dict[str, list[str]]:
    """Error messages by where the page shows them (ERROR_TARGETS' keys)."""
    errors: dict[str, list[str]] = {}
    if form is not None:
        for name, messages_ in form.errors.items():
            where = name if name in ERROR_TARGETS else "form"
            if name in ("correct_left", "correct_right"):
                question = domain.question_for("A" if name == "correct_left" else "B")
                messages_ = [f"Answer “{question}”" if m == MISSING_LABEL else m for m in messages_]
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


@functools.cache
def _keymap(
    *, allow_tie: bool, domain_words: tuple[str, str, str] | None, judged: bool, can_revise: bool
) -> tuple[tuple[str, tuple[str, ...], str], ...]:
    """(action, keys, meaning) of every key the compare page acts on for an
    item like this one, `keys` a tuple of key names: the `?` panel lists
    exactly these, and work.js acts only on the actions listed (data-actions)."""
    keys = [
        ("left", "1,←", "A (left) is better"),
        ("right", "2,→", "B (right) is better"),
    ]
    if allow_tie:
        keys.append(("tie", "0", "Tie (say why in the rationale)"))
    if domain_words is not None:
        question, yes, no = domain_words
        for side, (k_yes, k_no, k_unsure) in (("A", "qwe"), ("B", "opu")):
            q = question.replace("{response}", side)
            keys += [
                (f"{side.lower()}-yes", k_yes, f"{q} {yes}"),
                (f"{side.lower()}-no", k_no, f"{q} {no}"),
                (f"{side.lower()}-unsure", k_unsure, f"{q} Unsure"),
            ]
    keys += [
        ("confidence", "[,]", "Confidence down / up"),
        ("rationale", "r", "Write a rationale (Esc leaves the box, Ctrl+Enter submits)"),
    ]
    if not judged:
        keys.append(("submit", "Enter", "Submit (with nothing focused or from the form)"))
        keys.append(("skip", "s", "Skip (asks for a reason)"))
        keys.append(
            (
                "undo",
                "Backspace",
                "Undo: back to your last vote, to change it while its item still waits for votes",
            )
        )
    elif can_revise:
        keys.append(("submit", "Enter", "Save the revised judgement"))
    keys += [
        ("flag", "x", "Flag a problem with the item"),
        ("zoom", "+,-,.", "Zoom in / out / fit; drag to pan, wheel to zoom"),
        ("fullsize", "f", "Image at full size"),
        ("guidelines", "g", "Guidelines"),
        ("keys", "?", "This list"),
        ("close", "Esc", "Close panels and full size"),
    ]
    return tuple((action, tuple(k.split(",")), meaning) for action, k, meaning in keys)


def _render_work(
    request,
    assignment: Assignment,
    form=None,
    skip_form=None,
    status=200,
    return_to: str = "",
    notice: str = "",
):
    item = assignment.item
    project = item.project
    domain = item.domain
    judgement = None
    if assignment.status == AssignmentStatus.SUBMITTED:
        judgement = assignment.judgements.get(is_current=True)
    html = item.rendered()
    left, right = rules.displayed_pair(
        html["response_1"], html["response_2"], swapped=assignment.shown_swapped
    )
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
    )
    responses = [
        {
            "side": side,
            "name": name,
            "hotkeys": hotkeys,
            "html": response_html,
            "question": domain.question_for(name),
            "field": f"correct_{side}",
            "choices": _correctness_choices(domain.yes_label, domain.no_label, keys),
            "value": values.get(f"correct_{side}"),
            "errors": errors.get(f"correct_{side}"),
        }
        for side, name, hotkeys, response_html, keys in (
            ("left", "A", ("1", "←"), left, "qwe"),
            ("right", "B", ("2", "→"), right, "opu"),
        )
    ]
    context = {
        "project": project,
        "assignment": assignment,
        "item": item,
        "prompt_html": html["prompt"],
        "domain": domain,
        "responses": responses,
        "judgement": judgement,
        "can_revise": revisable,
        "values": values,
        # Every place the template looks, with its messages (most often none).
        "errors": {where: errors.get(where, ()) for where in ERROR_TARGETS},
        "error_summary": _error_summary(errors) if errors else (),
        "skip_errors": "skip" in errors,
        "skip_reason": (skip_form["reason"].value() or "") if skip_form is not None else "",
        "return_to": return_to,
        "notice": notice,
        "keymap": keymap,
        "actions": " ".join(action for action, _, _ in keymap),
        "confidence_choices": CONFIDENCE_CHOICES,
        "confidence": confidence,
        "submit_url": reverse("work_submit", args=[assignment.pk]),
        "skip_url": reverse("work_skip", args=[assignment.pk]),
        "undo_url": reverse("work_undo", args=[project.slug]),
        "ahead_url": reverse("work_ahead", args=[project.slug]),
        "progress": _progress(project, request.user),
    }
    # htmx swaps in the #work element alone; the full page includes the same
    # template in the site's layout.
    template = "annotate/_work.html" if request.htmx else "annotate/work.html"
    response = render(request, template, context, status=status)
    response["Cache-Control"] = "no-store"
    return response


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


def _displayed_initial(judgement: Judgement, assignment: Assignment) -> dict:
    return {
        **rules.displayed_answer(judgement, swapped=assignment.shown_swapped),
        "confidence": judgement.confidence,
        "rationale": judgement.rationale,
        "flagged_problem": judgement.flagged_problem,
        "problem_reason": judgement.problem_reason,
    }


def _go_next(request, project: Project, assignment: Assignment | None):
    """After a submit or skip: the item the caller claimed next (htmx: swapped
    in, URL pushed so the back button returns to the previous one), or, with
    None, the done page."""
    if assignment is None:
        url = reverse("work_done", args=[project.slug])
    else:
        url = reverse("work_item", args=[assignment.pk])
    if request.htmx:
        if assignment is None:
            response = HttpResponse(status=204)
            response["HX-Redirect"] = url
            return response
        if not Assignment.item.is_cached(assignment):
            # A fresh claim brings its item, domain and image along; a resumed
            # lease comes bare.
            assignment = _assignment_for(request, assignment.pk)
        response = _render_work(request, assignment)
        response["HX-Push-Url"] = url
        return response
    return redirect(url)


@require_POST
@login_required
def work_start(request, slug):
    project, _ = project_for(request.user, slug)
    assignment = claim_next_item(project=project, annotator=request.user)
    if assignment is None:
        return redirect("work_done", slug=project.slug)
    return redirect("work_item", assignment_id=assignment.pk)


@require_GET
@login_required
def work_done(request, slug):
    project, role = project_for(request.user, slug)
    return render(
        request,
        "annotate/done.html",
        {
            "project": project,
            "role": role,
            "progress": _progress(project, request.user),
            "more_may_come": votes_may_come(project=project, annotator=request.user),
        },
    )


@require_GET
@login_required
def work_item(request, assignment_id):
    assignment = _assignment_for(request, assignment_id)
    return_to = _safe_next(request, request.GET.get("next"))
    notice = ""
    if request.GET.get("undo") and assignment.status == AssignmentStatus.SUBMITTED:
        notice = (
            "Your last vote is open again: change it and press Enter to save it as a "
            "revision (the old one stays in your history)."
        )
    return _render_work(request, assignment, return_to=return_to, notice=notice)


def _safe_next(request, url: str | None) -> str:
    """`url` if it is a path on this site, else ""."""
    if (
        url
        and url.startswith("/")
        and url_has_allowed_host_and_scheme(
            url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        )
    ):
        return url
    return ""


def _return_after_revise(request, project: Project) -> str:
    """Where a revision returns to: the page the annotator opened the item
    from (the form's `next`), else the item they hold open in the project,
    else their history."""
    url = _safe_next(request, request.POST.get("next"))
    if url:
        return url
    held = (
        Assignment.objects.own(request.user)
        .filter(
            item__project=project,
            status=AssignmentStatus.OPEN,
            lease_expires_at__gt=timezone.now(),
        )
        .order_by("claimed_at", "pk")
        .values_list("pk", flat=True)
        .first()
    )
    if held is not None:
        return reverse("work_item", args=[held])
    return reverse("history", args=[project.slug])


def _full_page_redirect(request, url: str) -> HttpResponse:
    """A redirect the browser follows as a whole page (htmx: HX-Redirect), so
    the address bar always names what is on screen."""
    if request.htmx:
        response = HttpResponse(status=204)
        response["HX-Redirect"] = url
        return response
    return redirect(url)


@require_POST
@login_required
def work_ahead(request, slug):
    """The item the compare page keeps ready behind the one on screen
    (`holding`): leased now (annotate.loop.service.claim_ahead), answered as
    the #work fragment with its URL in X-Item-Url; 204 when there is none."""
    project, _ = project_for(request.user, slug)
    holding = request.POST.get("holding", "")
    ahead = None
    if holding.isdecimal():
        ahead = claim_ahead(project=project, annotator=request.user, holding=int(holding))
    if ahead is None:
        return HttpResponse(status=204)
    assignment = _assignment_for(request, ahead.pk)
    response = _render_work(request, assignment)
    response["X-Item-Url"] = reverse("work_item", args=[assignment.pk])
    return response


@require_GET
@login_required
def work_undo(request, slug):
    """Undo the last vote: its item again, with the vote in the form, to be
    changed and saved as a revision while the item still waits for votes."""
    project, _ = project_for(request.user, slug)
    back = _safe_next(request, request.GET.get("next")) or reverse("history", args=[project.slug])
    last = (
        Judgement.objects.filter(
            assignment__annotator=request.user,
            assignment__item__project=project,
            assignment__status=AssignmentStatus.SUBMITTED,
            is_current=True,
        )
        .select_related("assignment__item")
        .order_by("-created_at", "-pk")
        .first()
    )
    if last is None:
        messages.info(request, "There is no vote to undo in this project yet.")
        return redirect(back)
    if not can_revise(last.assignment.item):
        messages.error(
            request,
            "Your last vote can no longer be changed: its item has all its votes.",
        )
        return redirect(back)
    url = reverse("work_item", args=[last.assignment_id])
    return redirect(f"{url}?{urlencode({'undo': '1', 'next': back})}")


@require_POST
@login_required
def work_submit(request, assignment_id):
    form = JudgementForm(request.POST)
    errors: dict[str, str] = {}
    if form.is_valid():
        try:
            if "revise" in request.POST:
                assignment = _assignment_for(request, assignment_id, related=("item__project",))
                if assignment.status == AssignmentStatus.SUBMITTED:
                    revised = revise_judgement(
                        assignment_id=assignment.pk,
                        annotator=request.user,
                        vote=form.to_vote(assignment),
                    )
                    messages.success(
                        request,
                        f"Your judgement was revised (revision {revised.revision}); "
                        "the earlier one stays in your history.",
                    )
                    project = assignment.item.project
                    return _full_page_redirect(request, _return_after_revise(request, project))
            # The vote needs the assignment's display order: the service reads
            # and locks the assignment (with its item and project) and maps the
            # form's sides to canonical terms; the view reads nothing first.
            # The next item is leased in the vote's transaction (one commit).
            judgement, following = submit_and_claim_next(
                assignment_id=assignment_id, annotator=request.user, vote=form.to_vote
            )
        except Assignment.DoesNotExist:
            raise Http404("No such assignment") from None
        except JudgementInvalid as exc:
            errors = exc.errors
        except AnnotationError as exc:
            form.add_error(None, str(exc))
        else:
            return _go_next(request, judgement.assignment.item.project, following)
    # Read again (the status may have changed) with what the page shows.
    assignment = _assignment_for(request, assignment_id)
    if not errors and form.errors and not form.non_field_errors():
        errors = form.other_problems(assignment)
    form.add_service_errors(errors, assignment)
    return _render_work(
        request,
        assignment,
        form=form,
        status=422 if request.htmx else 400,
        return_to=_safe_next(request, request.POST.get("next")),
    )


@require_POST
@login_required
def work_skip(request, assignment_id):
    assignment = _assignment_for(request, assignment_id)
    skip_form = SkipForm(request.POST)
    if skip_form.is_valid():
        try:
            skip_item(
                assignment_id=assignment.pk,
                annotator=request.user,
                reason=skip_form.cleaned_data["reason"],
            )
        except AnnotationError as exc:
            skip_form.add_error(None, str(exc))
        else:
            project = assignment.item.project
            return _go_next(
                request, project, claim_next_item(project=project, annotator=request.user)
            )
    return _render_work(request, assignment, skip_form=skip_form, status=400)


HISTORY_PAGE_SIZE = 25

# The history's filter: status name → (label, condition on the assignment).
_CURRENT = Judgement.objects.filter(assignment=OuterRef("pk"), is_current=True)
HISTORY_FILTERS = {
    "submitted": ("Submitted", Q(status=AssignmentStatus.SUBMITTED)),
    "revised": ("Revised", Exists(_CURRENT.filter(revision__gt=1))),
    "flagged": ("Flagged", Exists(_CURRENT.filter(flagged_problem=True))),
    "skipped": ("Skipped", Q(status=AssignmentStatus.SKIPPED)),
}


@require_GET
@login_required
def history(request, slug):
    """Everything the annotator did in the project, newest first: each item
    they judged (with every revision) or skipped, filterable by status."""
    project, role = project_for(request.user, slug)
    status = request.GET.get("status", "")
    assignments = (
        Assignment.objects.own(request.user)
        .filter(
            item__project=project,
            status__in=[AssignmentStatus.SUBMITTED, AssignmentStatus.SKIPPED],
        )
        .select_related("item__domain", "item__image")
        .defer(
            "item__response_1",
            "item__response_2",
            "item__reference_answer",
            "item__response_1_html",
            "item__response_2_html",
            "item__meta",
        )
        .prefetch_related(
            Prefetch(
                "judgements",
                queryset=Judgement.objects.order_by("-revision"),
                to_attr="revisions",
            )
        )
        .order_by("-claimed_at", "-pk")
    )
    if status in HISTORY_FILTERS:
        assignments = assignments.filter(HISTORY_FILTERS[status][1])
    else:
        status = ""
    page = Paginator(assignments, HISTORY_PAGE_SIZE).get_page(request.GET.get("page"))
    here = request.get_full_path()
    rows = []
    for a in page.object_list:
        revisions = [(j, _displayed_side(j, a)) for j in a.revisions]
        current = revisions[0][0] if revisions else None
        if a.status == AssignmentStatus.SKIPPED:
            badges = ["skipped"]
        else:
            badges = ["submitted"]
            if current is not None and current.revision > 1:
                badges.append("revised")
        if current is not None and current.flagged_problem:
            badges.append("flagged")
        rows.append(
            {
                "assignment": a,
                "item": a.item,
                # The prompt as text: its rendered HTML without tags (the
                # Markdown source before the item is first rendered).
                "snippet": strip_tags(a.item.prompt_html) if a.item.prompt_html else a.item.prompt,
                "current": current,
                "side": revisions[0][1] if revisions else "",
                "earlier": revisions[1:],
                "badges": badges,
                "when": current.created_at if current is not None else a.claimed_at,
                "open_url": f"{reverse('work_item', args=[a.pk])}?{urlencode({'next': here})}",
            }
        )
    return render(
        request,
        "annotate/history.html",
        {
            "project": project,
            "role": role,
            "page": page,
            "rows": rows,
            "status": status,
            "filters": [(k, label) for k, (label, _) in HISTORY_FILTERS.items()],
        },
    )


def _displayed_side(judgement: Judgement, assignment: Assignment) -> str:
    return rules.displayed_choice(judgement.choice, swapped=assignment.shown_swapped)
