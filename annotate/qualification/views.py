"""The qualification pages (issue 36 item 1): a newcomer's overview (start,
retry, their attempts), each qualification item on the compare page, and
after each answer whether it was right with the item's explanation."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from annotate.loop import rules
from annotate.loop.forms import JudgementForm
from annotate.loop.page import render_work
from annotate.models import (
    Item,
    ItemPurpose,
    Membership,
    QualificationAnswer,
    QualificationAttempt,
    Role,
)
from annotate.projects import CURATOR_ROLES, member_of, project_for
from annotate.qualification.service import (
    JudgementInvalid,
    QualificationError,
    admit_member,
    answer_item,
    attempts_by_member,
    display_order,
    next_item,
    qualification_status,
    start_attempt,
)
from common.body_guard import guard_body


class Turn:
    """A qualification item as the compare page takes an assignment: its item,
    the display order drawn for it in the attempt, never submitted."""

    status = "open"

    def __init__(self, attempt: QualificationAttempt, item, place: int):
        self.attempt, self.item, self.place = attempt, item, place
        self.pk = f"q{attempt.pk}-{item.pk}"
        self.display_order = display_order(attempt.pk, item.pk)
        self.shown_swapped = rules.is_swapped(self.display_order)
        self.claimed_at = timezone.now()


def _render_turn(request, turn: Turn, form=None, status=200):
    attempt, item = turn.attempt, turn.item
    url = reverse("qualify_answer", args=[attempt.project.slug, attempt.pk, item.pk])
    page = {
        "submit_url": url,
        "skip_url": "",
        "undo_url": "",
        "ahead_url": "",
        "progress": None,
        "qualifying": {"place": turn.place, "total": len(attempt.item_ids)},
        "drop": ("skip", "undo"),
    }
    return render_work(request, turn, form=form, status=status, page=page)


@require_GET
@login_required
def qualify(request, slug):
    """The member's qualification: the answer just given (?answered=), the
    open attempt's next item, or the overview (start, retry, attempts)."""
    project, role = project_for(request.user, slug)
    status = qualification_status(project=project, user=request.user)
    answered = request.GET.get("answered", "")
    if answered.isdecimal():
        answer = (
            QualificationAnswer.objects.filter(
                pk=int(answered),
                attempt__annotator=request.user,
                attempt__project=project,
            )
            .select_related("item", "attempt")
            .first()
        )
        if answer is None:
            raise Http404("No such answer")
        return _feedback(request, project, answer)
    attempt = status.open_attempt
    if attempt is not None:
        item = next_item(attempt)
        if item is not None:
            place = attempt.answers.count() + 1
            return _render_turn(request, Turn(attempt, item, place))
    return render(
        request,
        "annotate/qualify.html",
        {"project": project, "role": role, "status": status, "now": timezone.now()},
    )


def _feedback(request, project, answer: QualificationAnswer):
    item, attempt = answer.item, answer.attempt
    swapped = rules.is_swapped(answer.display_order)
    gold_side = rules.side_of(item.gold_choice, swapped=swapped)
    context = {
        "project": project,
        "answer": answer,
        "item": item,
        "attempt": attempt,
        "gold_name": "A" if gold_side == "left" else "B",
        "given": rules.displayed_choice(answer.choice, swapped=swapped) if answer.choice else "",
        "finished": attempt.finished_at is not None,
        "answered": attempt.answers.count(),
    }
    response = render(request, "annotate/qualify_feedback.html", context)
    response["Cache-Control"] = "no-store"
    return response


@guard_body(member_of())
@require_POST
@login_required
def qualify_start(request, slug):
    project, _ = project_for(request.user, slug)
    try:
        start_attempt(project=project, annotator=request.user)
    except QualificationError as exc:
        messages.error(request, str(exc))
    return redirect("qualify", slug=project.slug)


@guard_body(member_of())
@require_POST
@login_required
def qualify_answer(request, slug, attempt_id, item_id):
    project, _ = project_for(request.user, slug)
    attempt = QualificationAttempt.objects.filter(
        pk=attempt_id, project=project, annotator=request.user
    ).first()
    if attempt is None or item_id not in attempt.item_ids:
        raise Http404("No such qualification item")
    form = JudgementForm(request.POST)
    errors: dict[str, str] = {}
    if form.is_valid():
        try:
            answer = answer_item(
                attempt_id=attempt.pk, annotator=request.user, item_id=item_id, vote=form.to_vote()
            )
        except JudgementInvalid as exc:
            errors = exc.errors
        except QualificationError as exc:
            messages.error(request, str(exc))
            return _redirect(request, reverse("qualify", args=[project.slug]))
        else:
            url = reverse("qualify", args=[project.slug]) + f"?answered={answer.pk}"
            return _redirect(request, url)
    item = Item.objects.filter(pk=item_id).select_related("project", "domain", "image").first()
    if item is None:
        raise Http404("No such qualification item")
    turn = Turn(attempt, item, attempt.answers.count() + 1)
    if not errors and form.errors and not form.non_field_errors():
        errors = form.other_problems(turn)
    form.add_service_errors(errors)
    return _render_turn(request, turn, form=form, status=422 if request.htmx else 400)


def _redirect(request, url: str):
    """A full page load of `url` (htmx: by its HX-Redirect header)."""
    if request.htmx:
        response = HttpResponse(status=204)
        response["HX-Redirect"] = url
        return response
    return redirect(url)


# --- Curators ----------------------------------------------------------------------------


@require_GET
@login_required
def qualification_people(request, slug):
    """Curators: each annotator's admission and qualification attempts (a
    constant number of queries), with a manual admission."""
    project, role = project_for(request.user, slug, CURATOR_ROLES)
    return render(request, "annotate/qualify_people.html", people_context(project, role))


def people_context(project, role) -> dict:
    members = (
        Membership.objects.filter(project=project, role=Role.ANNOTATOR)
        .select_related("user", "admitted_by")
        .order_by("pseudonym", "user_id")
    )
    attempts = attempts_by_member(project)
    rows = [{"membership": m, "attempts": attempts.get(m.user_id, [])} for m in members]
    n_items = Item.objects.live_gates(ItemPurpose.QUALIFICATION).filter(project=project).count()
    return {"project": project, "role": role, "rows": rows, "n_items": n_items}


@guard_body(member_of(CURATOR_ROLES))
@require_POST
@login_required
def qualification_admit(request, slug, user_id):
    project, _ = project_for(request.user, slug, CURATOR_ROLES)
    if not Membership.objects.filter(project=project, user_id=user_id, role=Role.ANNOTATOR):
        raise Http404("No such annotator")
    reason = request.POST.get("reason", "").strip()[:500]
    admit_member(project=project, user_id=user_id, actor=request.user, reason=reason)
    messages.success(request, "Admitted: they now get the project's benchmark items.")
    return redirect("qualification_people", slug=project.slug)
