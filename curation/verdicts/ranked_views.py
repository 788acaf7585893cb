"""The curators' adjudication page for a best-of-N or ranking item (issue
33, deliverable 4): every annotator's ranking or pick (pseudonymous, in
canonical slot terms), the Borda and Kemeny-Young aggregates with the one
proposed said, and a form setting the final ranking (or best response).
The pair page (curation.verdicts.views.adjudicate) hands ranked items here;
exclude, more votes and reopen are the same decisions as a pair's."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotate.models import Membership, Task, parts_by_slot
from annotate.models.parts import response_slots
from annotate.projects import CURATOR_ROLES, member_of, project_for
from common.body_guard import guard_body
from curation.models import VerdictRank
from curation.verdicts import ranked
from curation.verdicts.ranked_decisions import resolve_ranked
from curation.verdicts.views import (
    ITEM_ACTIONS,
    apply_decision,
    decision_context,
    verdict_or_404,
)

TEMPLATE = "curation/adjudicate_ranked.html"


class RankedDecisionForm(forms.Form):
    action = forms.ChoiceField(
        choices=[
            ("resolve", "Set the final ranking"),
            ("exclude", "Exclude"),
            ("more_votes", "Request more votes"),
            ("reopen", "Reopen"),
        ]
    )
    pick = forms.CharField(required=False, max_length=2)
    category = forms.CharField(required=False, max_length=16)
    n = forms.IntegerField(required=False, min_value=1, max_value=20)
    reason = forms.CharField(required=False, max_length=5000)
    version = forms.IntegerField(min_value=0)


def _aggregates(votes: ranked.RankedVotes, n_slots: int) -> dict | None:
    """Borda and Kemeny-Young over the item's complete-or-partial rankings
    (curation.agreement.ranking_aggregate); None without a ranking."""
    from curation.agreement import ranking
    from curation.agreement import ranking_aggregate as rka

    if votes.task != Task.RANKING or not votes.votes:
        return None
    table = ranking.RankTable.of(
        [ranking.Ranking(0, i, v.ranks) for i, v in enumerate(votes.votes)]
    )
    borda, kemeny = rka.borda(table.ranks), rka.kemeny(table.ranks)
    rows = [
        {
            "slot": slot,
            "borda_rank": borda.ranks[slot - 1],
            "borda_score": borda.scores[slot - 1],
            "kemeny_rank": kemeny.ranks[slot - 1],
        }
        for slot in range(1, n_slots + 1)
    ]
    pairs = n_slots * (n_slots - 1) // 2 * len(votes.votes)
    return {"rows": rows, "kemeny": kemeny, "borda": borda, "pairs": pairs}


def _pick_counts(votes: ranked.RankedVotes, n_slots: int) -> list[dict] | None:
    if votes.task != Task.BEST_OF_N:
        return None
    counts = [0] * (n_slots + 1)
    for v in votes.votes:
        counts[n_slots if v.slot is None else v.slot] += 1
    rows = [{"label": f"Response {s}", "n": counts[s - 1]} for s in range(1, n_slots + 1)]
    return [*rows, {"label": "None is acceptable", "n": counts[n_slots]}]


def ranked_context(request, project, role, item_id) -> dict:
    verdict = verdict_or_404(project, item_id)
    item = verdict.item
    item.content_by_slot = parts_by_slot(item)
    n_slots = len(response_slots(item.content_by_slot))
    slots = list(range(1, n_slots + 1))
    votes = ranked.votes_of([item.pk], project).get(item.pk, ranked.empty_votes(project))
    voters = list(
        ranked.current_voters(item.pk, project.task).values_list(
            "assignment__annotator_id", "imported", "rationale", "problem_reason"
        )
    )
    names = dict(Membership.objects.filter(project=project).values_list("user_id", "pseudonym"))
    rows = []
    for (annotator_id, imported, rationale, problem), vote in zip(voters, votes.votes, strict=True):
        row = {
            "name": names.get(annotator_id) or f"annotator #{annotator_id}",
            "imported": imported,
            "rationale": rationale,
            "flagged": vote.flagged_problem,
            "problem": problem,
        }
        if votes.task == Task.RANKING:
            row["ranks"] = ["—" if r is None else r for r in vote.ranks]
        else:
            row["pick"] = "none" if vote.slot is None else vote.slot + 1
        rows.append(row)
    aggregates = _aggregates(votes, n_slots)
    stored = dict(VerdictRank.objects.filter(verdict=verdict).values_list("slot", "rank"))
    if stored:
        proposed = [stored.get(s) for s in slots]
    elif aggregates:
        proposed = list(aggregates["kemeny"].ranks)
    else:
        proposed = [""] * n_slots
    voted = ranked.current_voters(item.pk, None, user=request.user).exists()
    return {
        **decision_context(request, project, role, verdict, voted=voted),
        "slots": slots,
        "rank_inputs": list(zip(slots, proposed, strict=True)),
        "final_ranks": [stored.get(s) for s in slots] if stored else [],
        "is_ranking": project.task == Task.RANKING,
        "rows": rows,
        "aggregates": aggregates,
        "pick_counts": _pick_counts(votes, n_slots),
    }


def adjudicate_ranked(request, project, role, item_id):
    """GET: called by views.adjudicate (login and role checked there)."""
    return render(request, TEMPLATE, ranked_context(request, project, role, item_id))


@guard_body(member_of(CURATOR_ROLES))
@require_POST
@login_required
def decide_ranked(request, slug, item_id):
    project, role = project_for(request.user, slug, CURATOR_ROLES)
    if not ranked.is_ranked(project):
        raise Http404("Not a best-of-N or ranking project")
    form = RankedDecisionForm(request.POST)

    def resolve(data, common):
        ranks = [
            request.POST.get(f"rank_{slot}", "")
            for slot in range(1, 9)
            if f"rank_{slot}" in request.POST
        ]
        resolve_ranked(pick=data["pick"], ranks=ranks, **common)

    actions = {"resolve": resolve, **ITEM_ACTIONS}
    action, status = apply_decision(request, project, item_id, form, actions)
    if action is not None:
        messages.success(request, f"Saved: {dict(form.fields['action'].choices)[action]}.")
        return redirect("adjudicate", slug=project.slug, item_id=item_id)
    context = ranked_context(request, project, role, item_id)
    return render(request, TEMPLATE, context, status=status)
