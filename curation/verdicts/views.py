"""The curators' verdict pages: the rule's settings, the contested queue,
adjudication, accepting a domain's agreed items, the audit log (and its CSV).
"""

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import (
    Case,
    Count,
    F,
    FloatField,
    IntegerField,
    Prefetch,
    Q,
    Value,
    When,
)
from django.db.models.functions import Cast, Greatest
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotate.eligibility import eligible_counts
from annotate.loop.scales import point_label
from annotate.models import ItemPart, Judgement, Membership, PartKind, Slot, Task
from annotate.projects import ADMIN_ROLES, CURATOR_ROLES, member_of, project_for
from common.body_guard import guard_body
from curation.agreement.values import from_json
from curation.exports import formats as export_formats
from curation.gold.views import adjudication_gold_context
from curation.models import (
    AgreementCache,
    AuditEvent,
    ContestKind,
    ExclusionCategory,
    Verdict,
    VerdictStatus,
)
from curation.spreadsheet_cells import SafeWriter
from curation.verdicts import ranked
from curation.verdicts.decisions import (
    CurationError,
    StaleDecision,
    accept_agreed,
    exclude_item,
    reopen_item,
    request_more_votes,
    resolve_item,
)
from curation.verdicts.forms import AuditFilterForm, DecisionForm, ThresholdsForm
from curation.verdicts.service import stuck_items, stuck_reason, update_thresholds


def describe_moves(moved) -> str:
    """'3 items now agreed, 2 now contested.' from update_thresholds' counts."""
    if not moved:
        return "No item changed status."
    labels = dict(VerdictStatus.choices)
    parts = [
        f"{n} item{'s' if n != 1 else ''} now {labels[status].lower()}"
        for status, n in sorted(moved.items(), key=lambda kv: list(labels).index(kv[0]))
    ]
    return ", ".join(parts) + "."


@guard_body(member_of(ADMIN_ROLES))
@require_http_methods(["GET", "POST"])
@login_required
def rule_settings(request, slug):
    project, role = project_for(request.user, slug, ADMIN_ROLES)
    initial = {
        "votes_per_item": project.votes_per_item,
        "agree_share": project.agree_share,
        "escalation_votes": project.escalation_votes,
        "consensus_strength": project.consensus_strength,
        "ranking_least_w": project.ranking_least_w,
    }
    form = ThresholdsForm(
        request.POST or None,
        initial=initial,
        graded=project.is_graded,
        ranking=project.task == Task.RANKING,
    )
    if request.method == "POST" and form.is_valid():
        moved = update_thresholds(project=project, actor=request.user, **form.cleaned_data)
        messages.success(request, f"Rule saved. {describe_moves(moved)}")
        stuck = stuck_items(project).count()
        if stuck:
            messages.warning(
                request,
                f"{stuck} item{'s' if stuck != 1 else ''} still wait for votes that no "
                "eligible annotator can give: see the curation queue's Stuck tab.",
            )
        return redirect("rule_settings", slug=project.slug)
    return render(
        request,
        "curation/rule_settings.html",
        {"project": project, "role": role, "form": form},
        status=400 if form.errors else 200,
    )


# --- Contested queue and adjudication ------------------------------------------------

QUEUE_PAGE_SIZE = 50
# The queue's filter for items waiting on votes nobody eligible can give.
STUCK = "stuck"
QUEUE_SORTS = {
    "oldest": ("updated_at", "pk"),
    "newest": ("-updated_at", "-pk"),
    "split": ("winner_share", "updated_at", "pk"),
}


def _queue(project, params):
    """The curation queue's verdicts, filtered and sorted as `params` say."""
    status = params.get("status") or VerdictStatus.CONTESTED
    verdicts = Verdict.objects.filter(project=project)
    if status == STUCK:
        verdicts = verdicts.stuck(project)
    elif status != "all":
        verdicts = verdicts.filter(status=status)
    if params.get("domain"):
        verdicts = verdicts.filter(item__domain__slug=params["domain"])
    if params.get("kind"):
        verdicts = verdicts.filter(contest_kind=params["kind"])
    if params.get("annotator"):
        voted = Judgement.objects.filter(
            assignment__annotator__memberships__project=project,
            assignment__annotator__memberships__pseudonym=params["annotator"],
        ).values("assignment__item_id")
        verdicts = verdicts.filter(item_id__in=voted)
    if params.get("q"):
        q = params["q"]
        verdicts = verdicts.filter(Q(item__external_id__icontains=q) | Q(item__prompt__icontains=q))
    total = F("item__votes_1") + F("item__votes_2") + F("item__votes_tie")
    verdicts = verdicts.annotate(
        winner_share=Cast(
            Greatest("item__votes_1", "item__votes_2", "item__votes_tie"), FloatField()
        )
        / Greatest(Cast(total, FloatField()), Value(1.0))
    )
    order = QUEUE_SORTS.get(params.get("sort") or "oldest", QUEUE_SORTS["oldest"])
    # Each row shows the item's picture and the start of its prompt: the
    # prompt's pictures (its parts) in one more query for the whole page
    # (never one per row).
    prompt_pictures = Prefetch(
        "item__content_parts",
        queryset=ItemPart.objects.filter(slot=Slot.PROMPT, kind=PartKind.IMAGE)
        .select_related("image")
        .order_by("position"),
        to_attr="prompt_pictures",
    )
    return (
        verdicts.select_related("item__domain").prefetch_related(prompt_pictures).order_by(*order)
    )


@require_GET
@login_required
def curation_queue(request, slug):
    project, role = project_for(request.user, slug, CURATOR_ROLES)
    params = request.GET
    page = Paginator(_queue(project, params), QUEUE_PAGE_SIZE).get_page(params.get("page"))
    by_kind = dict(
        Verdict.objects.filter(project=project, status=VerdictStatus.CONTESTED)
        .values("contest_kind")
        .annotate(n=Count("pk"))
        .values_list("contest_kind", "n")
    )
    by_status = dict(
        Verdict.objects.filter(project=project)
        .values("status")
        .annotate(n=Count("pk"))
        .values_list("status", "n")
    )
    domains = list(project.domains.order_by("position"))
    agreed_by_domain = dict(
        Verdict.objects.filter(project=project, status=VerdictStatus.AGREED)
        .values("item__domain_id")
        .annotate(n=Count("pk"))
        .values_list("item__domain_id", "n")
    )
    query = params.copy()
    query.pop("page", None)
    if params.get("status") == STUCK:
        rows = stuck_items(project).filter(pk__in=[v.item_id for v in page.object_list])
        reasons = {item.pk: stuck_reason(item) for item in rows}
        for v in page.object_list:  # (evaluated once, above; the template reuses it)
            v.stuck_reason = reasons.get(v.item_id, "")
    return render(
        request,
        "curation/queue.html",
        {
            "project": project,
            "role": role,
            "page": page,
            "params": params,
            "query": query.urlencode(),
            "kinds": [(k, label, by_kind.get(k, 0)) for k, label in ContestKind.choices if k],
            "statuses": [(s, label, by_status.get(s, 0)) for s, label in VerdictStatus.choices],
            "stuck_count": stuck_items(project).count(),
            "domains": [(d, agreed_by_domain.get(d.pk, 0)) for d in domains],
            "pseudonyms": Membership.objects.filter(project=project)
            .exclude(pseudonym="")
            .order_by("pseudonym")
            .values_list("pseudonym", flat=True),
            "sorts": list(QUEUE_SORTS),
            "export_domains": [(d.slug, d.title) for d in domains],
            "parquet_available": export_formats.parquet_available(),
        },
    )


def verdict_or_404(project, item_id, *related: str) -> Verdict:
    verdict = (
        Verdict.objects.select_related("item__domain", "decided_by", *related)
        .filter(project=project, item_id=item_id)
        .first()
    )
    if verdict is None:
        raise Http404("No such item")
    return verdict


def decision_context(request, project, role, verdict: Verdict, *, voted: bool) -> dict:
    """What every adjudication page shows of an item (the pair's and the
    ranked one's): its audit trail, the next contested item, whether the
    curator voted on it and who is left to vote."""
    item = verdict.item
    events = list(
        AuditEvent.objects.filter(item=item).select_related("actor").order_by("created_at", "pk")
    )
    return {
        "project": project,
        "role": role,
        "verdict": verdict,
        "item": item,
        "events": events,
        "next_item_id": next_contested(project, request.user, after=verdict),
        "conflict": voted and not project.allow_self_adjudication,
        "self_adjudication_warning": voted and project.allow_self_adjudication,
        "exclusion_categories": [c for c in ExclusionCategory.choices if c[0]],
        "eligible": eligible_counts(project=project, item_ids=[item.pk])[item.pk],
    }


def _adjudication_context(request, project, role, item_id):
    verdict = verdict_or_404(project, item_id, "item__image")
    item = verdict.item
    judgements = list(
        Judgement.objects.with_pair_answers()
        .filter(assignment__item=item)
        .select_related("assignment__annotator")
        .order_by("assignment__annotator_id", "revision")
    )
    names = dict(Membership.objects.filter(project=project).values_list("user_id", "pseudonym"))
    cache = AgreementCache.objects.filter(project=project).only("payload", "computed_at").first()
    reliability = (cache.payload.get("annotators", {}) if cache else {}) or {}
    votes = []
    for j in judgements:
        if not j.is_current:
            continue
        a = j.assignment
        rel = reliability.get(str(a.annotator_id), {})
        votes.append(
            {
                "judgement": j,
                "name": names.get(a.annotator_id) or f"annotator #{a.annotator_id}",
                "shown_left": "2" if a.shown_swapped else "1",
                "strength": (
                    "" if j.strength is None else point_label(j.strength, left="1", right="2")
                ),
                "agreement": from_json(rel.get("agreement")),
                "kappa": from_json(rel.get("kappa")),
                "n": rel.get("n_votes"),
            }
        )
    voted = any(j.assignment.annotator_id == request.user.pk for j in judgements)
    return {
        **decision_context(request, project, role, verdict, voted=voted),
        **adjudication_gold_context(project, verdict),
        "votes": votes,
        "superseded": sum(1 for j in judgements if not j.is_current),
        "reliability_at": cache.computed_at if cache else None,
    }


def next_contested(project, user, *, after: Verdict) -> int | None:
    """The item after `after` in queue order (oldest first), wrapping round,
    that this curator may decide (not one they voted on, unless the project
    allows it). One query."""
    queue = Verdict.objects.filter(project=project, status=VerdictStatus.CONTESTED).exclude(
        item_id=after.item_id
    )
    if not project.allow_self_adjudication:
        voted = Judgement.objects.filter(assignment__annotator=user).values("assignment__item_id")
        queue = queue.exclude(item_id__in=voted)
    later = Q(updated_at__gt=after.updated_at) | Q(updated_at=after.updated_at, pk__gt=after.pk)
    # Those after this one first (0), then wrap round to the start (1).
    ordered = queue.annotate(
        wrap=Case(When(later, then=Value(0)), default=Value(1), output_field=IntegerField())
    ).order_by("wrap", "updated_at", "pk")
    return ordered.values_list("item_id", flat=True).first()


@require_GET
@login_required
def adjudicate(request, slug, item_id):
    project, role = project_for(request.user, slug, CURATOR_ROLES)
    if ranked.is_ranked(project):
        from curation.verdicts.ranked_views import adjudicate_ranked

        return adjudicate_ranked(request, project, role, item_id)
    context = _adjudication_context(request, project, role, item_id)
    return render(request, "curation/adjudicate.html", context)


@guard_body(member_of(CURATOR_ROLES))
@require_POST
@login_required
def decide(request, slug, item_id):
    project, role = project_for(request.user, slug, CURATOR_ROLES)
    form = DecisionForm(request.POST)

    def resolve(data, common):
        resolve_item(choice=data["choice"], **common)

    actions = {"resolve": resolve, **ITEM_ACTIONS}
    action, status = apply_decision(request, project, item_id, form, actions)
    if action == "more_votes":
        n = form.cleaned_data["n"] or 2
        eligible = eligible_counts(project=project, item_ids=[item_id])[item_id]
        if eligible < n:
            messages.warning(
                request,
                f"Only {eligible} eligible annotator{'s are' if eligible != 1 else ' is'} "
                f"left for this item, fewer than the {n} votes asked: it is listed as "
                "stuck until they vote or a curator closes it.",
            )
    if action is not None:
        messages.success(request, f"Saved: {DECISION_LABELS[action]}.")
        nxt = request.POST.get("next")
        if nxt == "queue":
            return redirect("curation_queue", slug=project.slug)
        current = Verdict.objects.get(project=project, item_id=item_id)
        following = next_contested(project, request.user, after=current)
        if following is not None and action in ("resolve", "exclude", "more_votes"):
            return redirect("adjudicate", slug=project.slug, item_id=following)
        return redirect("adjudicate", slug=project.slug, item_id=item_id)
    context = _adjudication_context(request, project, role, item_id)
    return render(request, "curation/adjudicate.html", context, status=status)


# What a curator may do to any contested item besides resolving it:
# action -> (form data, the decision's common arguments) -> the decision.
ITEM_ACTIONS = {
    "exclude": lambda data, common: exclude_item(category=data["category"], **common),
    "more_votes": lambda data, common: request_more_votes(n=data["n"] or 2, **common),
    "reopen": lambda data, common: reopen_item(**common),
}


def apply_decision(request, project, item_id, form, actions) -> tuple[str | None, int]:
    """The decision a curator's form asks for (the pair's and the ranked
    adjudication pages', the label audit's review): `actions[action](data,
    common)`. Returns the action done, or None and the status of the page
    shown again (refusals are said in messages)."""
    if not form.is_valid():
        for errors in form.errors.values():
            for e in errors:
                messages.error(request, e)
        return None, 400
    data = form.cleaned_data
    common = {
        "project": project,
        "item_id": item_id,
        "curator": request.user,
        "reason": data["reason"],
        "version": data["version"],
    }
    action = data["action"]
    try:
        actions[action](data, common)
    except Verdict.DoesNotExist:
        raise Http404("No such item") from None
    except StaleDecision as exc:
        messages.error(request, str(exc))
        return None, 409
    except CurationError as exc:
        messages.error(request, str(exc))
        return None, 400
    return action, 200


DECISION_LABELS = {
    "resolve": "item resolved",
    "exclude": "item excluded",
    "more_votes": "more votes requested",
    "reopen": "item reopened",
}


@guard_body(member_of(CURATOR_ROLES))
@require_http_methods(["GET", "POST"])
@login_required
def accept_domain(request, slug, domain_slug):
    project, role = project_for(request.user, slug, CURATOR_ROLES)
    domain = project.domains.filter(slug=domain_slug).first()
    if domain is None:
        raise Http404("No such domain")
    count = Verdict.objects.filter(
        project=project, item__domain=domain, status=VerdictStatus.AGREED
    ).count()
    if request.method == "POST":
        if str(count) != request.POST.get("expected"):
            messages.error(
                request,
                f"The number of agreed items changed (now {count}); check and confirm again.",
            )
        else:
            accepted = accept_agreed(project=project, domain=domain, curator=request.user)
            messages.success(request, f"Accepted {accepted} agreed items of {domain.title}.")
            return redirect("curation_queue", slug=project.slug)
    return render(
        request,
        "curation/accept.html",
        {"project": project, "role": role, "domain": domain, "count": count},
    )


# --- Audit log --------------------------------------------------------------------------

AUDIT_PAGE_SIZE = 100


def _audit_events(project, params):
    events = AuditEvent.objects.filter(project=project).select_related("actor", "item")
    if params.get("action"):
        events = events.filter(action=params["action"])
    if params.get("actor"):
        if params["actor"] == "rule":
            events = events.filter(actor__isnull=True)
        else:
            events = events.filter(actor__username=params["actor"])
    if params.get("item"):
        events = events.filter(item__external_id=params["item"])
    if params.get("since"):
        events = events.filter(created_at__date__gte=params["since"])
    if params.get("until"):
        events = events.filter(created_at__date__lte=params["until"])
    return events.order_by("-created_at", "-pk")


@require_GET
@login_required
def audit_log(request, slug):
    project, role = project_for(request.user, slug, CURATOR_ROLES)
    form = AuditFilterForm(request.GET or None)
    params = form.cleaned_data if form.is_valid() else {}
    events = _audit_events(project, params)
    if request.GET.get("download") == "csv":
        response = StreamingHttpResponse(
            _audit_csv_rows(events.iterator(chunk_size=2000)),
            content_type="text/csv; charset=utf-8",
        )
        response["Content-Disposition"] = f'attachment; filename="{project.slug}-audit.csv"'
        return response
    page = Paginator(events, AUDIT_PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "curation/audit.html",
        {
            "project": project,
            "role": role,
            "page": page,
            "form": form,
            "query": query.urlencode(),
        },
    )


def _audit_csv_rows(events):
    buffer = _Echo()
    writer = SafeWriter(buffer)
    yield writer.writerow(["when", "actor", "action", "item", "before", "after", "reason"])
    for e in events:
        yield writer.writerow(
            [
                e.created_at.isoformat(),
                e.actor.get_username() if e.actor else "rule",
                e.action,
                e.item.external_id if e.item else "",
                json.dumps(e.before, sort_keys=True),
                json.dumps(e.after, sort_keys=True),
                e.reason,
            ]
        )


class _Echo:
    """A file-like object whose write returns the line (for streaming CSV)."""

    def write(self, value):
        return value
