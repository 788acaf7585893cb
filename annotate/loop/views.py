"""The annotator's pages: start, the compare page (as annotate.loop.page
renders it) and its submit, skip, undo and the item kept ready, the done
page, the history.
"""

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Exists, OuterRef, Prefetch, Q
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from annotate import checks
from annotate.loop import rules, scales
from annotate.loop.forms import JudgementForm, SkipForm, SlotVoteForm
from annotate.loop.page import progress, render_work
from annotate.loop.service import (
    COMPARE_PAGE_RELATED,
    AnnotationError,
    JudgementInvalid,
    can_revise,
    claim_ahead,
    claim_next_item,
    own_assignment_for_page,
    owns_assignment,
    revise_judgement,
    skip_item,
    submit_and_claim_next,
    votes_may_come,
)
from annotate.models import Assignment, AssignmentStatus, Judgement, Project
from annotate.models.parts import first_images
from annotate.projects import member_of, project_for
from annotate.qualification.service import is_admitted
from common.body_guard import guard_body

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
            # A fresh claim brings its item and domain along; a resumed lease
            # comes bare.
            assignment = _assignment_for(request, assignment.pk)
        response = render_work(request, assignment)
        response["HX-Push-Url"] = url
        return response
    return redirect(url)


@guard_body(member_of())
@require_POST
@login_required
def work_start(request, slug):
    project, _ = project_for(request.user, slug)
    if not project.votes_open:
        messages.error(request, project.votes_closed_reason)
        return redirect(project)
    if not is_admitted(project=project, user=request.user):
        return redirect("qualify", slug=project.slug)  # (issue 36: a newcomer qualifies first)
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
            "pause": checks.pause_in_force(project, request.user),
            "progress": progress(project, request.user),
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
    return render_work(request, assignment, return_to=return_to, notice=notice)


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


@guard_body(member_of())
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
    response = render_work(request, assignment)
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


@guard_body(owns_assignment)
@require_POST
@login_required
def work_submit(request, assignment_id):
    form = _vote_form(request.POST)
    errors: dict[str, str] = {}
    if form.is_valid():
        try:
            if "revise" in request.POST:
                assignment = _assignment_for(request, assignment_id, related=("item__project",))
                if assignment.status == AssignmentStatus.SUBMITTED:
                    revised = revise_judgement(
                        assignment_id=assignment.pk,
                        annotator=request.user,
                        vote=form.to_vote(),
                    )
                    messages.success(
                        request,
                        f"Your judgement was revised (revision {revised.revision}); "
                        "the earlier one stays in your history.",
                    )
                    project = assignment.item.project
                    return _full_page_redirect(request, _return_after_revise(request, project))
            # The vote goes as displayed: the service reads and locks the
            # assignment and maps it to canonical terms with its display
            # order; the view reads nothing first. The next item is leased
            # in the vote's transaction (one commit).
            judgement, following = submit_and_claim_next(
                assignment_id=assignment_id, annotator=request.user, vote=form.to_vote()
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
    pair = isinstance(form, JudgementForm)
    if pair and not errors and form.errors and not form.non_field_errors():
        errors = form.other_problems(assignment)
    form.add_service_errors(errors)
    return render_work(
        request,
        assignment,
        form=form,
        status=422 if request.htmx else 400,
        return_to=_safe_next(request, request.POST.get("next")),
    )


def _vote_form(data):
    """The form of the vote posted: a pair's (JudgementForm), or a best-of-N
    pick's or a ranking's (SlotVoteForm, by the task and the number of
    responses the page posted; the service checks both against the
    assignment's project and display order)."""
    task, n = data.get("task", ""), data.get("n", "")
    if task in rules.N_SLOT_TASKS and n.isdecimal() and 2 <= int(n) <= rules.MAX_SLOTS:
        return SlotVoteForm(data, task=task, n=int(n))
    return JudgementForm(data)


@guard_body(owns_assignment)
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
            # The rest of the item's group next, as after a vote (issue 34).
            following = claim_next_item(
                project=project, annotator=request.user, group=assignment.item.group_key
            )
            return _go_next(request, project, following)
    return render_work(request, assignment, skip_form=skip_form, status=400)


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
        .select_related("item__domain")
        .defer(
            "item__response_1",
            "item__response_2",
            "item__reference_answer",
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
    thumbnails = first_images(a.item_id for a in page.object_list)
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
                "image": thumbnails.get(a.item_id),
                # The prompt's text (its Markdown source).
                "snippet": a.item.prompt,
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
    """ "left", "right" or "tie"; a graded vote's point as displayed ("B
    slightly better")."""
    if judgement.strength is not None:
        shown = rules.canonical_strength(judgement.strength, swapped=assignment.shown_swapped)
        return scales.point_label(shown)
    return rules.displayed_choice(judgement.choice, swapped=assignment.shown_swapped)
