"""REST API of verdicts (/api/v1/): the list, one item with its votes and
history, a curator's decision. Curators and admins only, as the HTML pages;
the work is done by the same services (curation.verdicts).
"""

from __future__ import annotations

from django.db.models import Q
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.eligibility import eligible_counts
from annotate.models import Judgement, JudgementSlot, Membership, Task
from annotate.projects import CURATOR_ROLES, member_of
from common.api.errors import errors
from common.api.input import validated
from common.api.paging import PAGE_PARAMETERS, paginate, paginated
from common.api.schema import OPTIONAL_RESPONSES, RESPONSES
from common.body_guard import guard_body
from curation.api.access import curated_project
from curation.api.decisions import decision_errors, decision_keywords
from curation.models import (
    ContestKind,
    ExclusionCategory,
    Verdict,
    VerdictStatus,
)
from curation.models.verdicts import SLOT_CHOICES
from curation.verdicts import ranked
from curation.verdicts.decisions import (
    CurationError,
    exclude_item,
    reopen_item,
    request_more_votes,
    resolve_item,
)
from curation.verdicts.ranked_decisions import resolve_ranked
from curation.verdicts.service import stuck_items, stuck_reason

# A curator's decision in canonical terms: a slot, or a tie (the API's
# SlotDecisionEnum, config/settings.py).
DECISION_CHOICES = [*SLOT_CHOICES, "tie"]


class VerdictSerializer(serializers.Serializer):
    class VotesSerializer(serializers.Serializer):
        response_1 = serializers.IntegerField(source="votes_1")
        response_2 = serializers.IntegerField(source="votes_2")
        tie = serializers.IntegerField(source="votes_tie")
        ranked = serializers.IntegerField(
            source="votes_ranked", help_text="Best-of-N picks or rankings (an N-slot item's votes)."
        )

    item_id = serializers.IntegerField()
    external_id = serializers.CharField(source="item.external_id")
    domain = serializers.SlugField(source="item.domain.slug")
    status = serializers.ChoiceField(choices=VerdictStatus.choices)
    final_choice = serializers.ChoiceField(
        choices=["", *DECISION_CHOICES],
        help_text="Canonical response chosen (agreed or resolved): '1'/'2' for a pair, the "
        "best slot '1'..'8' for a best-of-N or ranked item; 'tie' when a curator resolved "
        "it as a tie, or set a ranking with a tied first place (not in MRB releases).",
    )
    final_ranks = serializers.SerializerMethodField(
        help_text="Ranked items (task 'ranking'): the final ranking in canonical slot order "
        "(1 = best, ties share a rank), the Kemeny-Young order when agreed, the curator's "
        "when resolved; [] otherwise (pairs, best-of-N, undecided)."
    )
    provenance = serializers.CharField(help_text="unanimous, majority, adjudicated, gold or ''.")
    contest_kind = serializers.ChoiceField(choices=ContestKind.choices)
    exclusion_category = serializers.ChoiceField(choices=ExclusionCategory.choices)
    reason = serializers.CharField()
    escalations = serializers.IntegerField()
    escalated_by = serializers.IntegerField(
        help_text="Extra votes the escalation asks for now (capped by eligible annotators)."
    )
    version = serializers.IntegerField(help_text="Send it back with a decision.")
    votes = VotesSerializer(source="item", help_text="Current votes, canonical.")
    votes_needed = serializers.IntegerField(source="item.votes_needed")
    decided_by = serializers.CharField(source="decided_by.username", allow_null=True)
    updated_at = serializers.DateTimeField()

    def get_final_ranks(self, verdict) -> list[int]:
        # Read only where the view prefetched them (ranked projects): a
        # pair's verdict has none and costs no query.
        if not self.context.get("ranked"):
            return []
        return [r.rank for r in sorted(verdict.final_ranks.all(), key=lambda r: r.slot)]


def _verdicts(project):
    return Verdict.objects.filter(project=project).select_related("item__domain", "decided_by")


class VerdictListApi(APIView):
    class FilterSerializer(serializers.Serializer):
        status = serializers.ChoiceField(
            choices=["all", *VerdictStatus.values, "stuck"],
            required=False,
            default="all",
            help_text="'stuck': items waiting for votes that no eligible annotator can give.",
        )
        domain = serializers.SlugField(required=False)
        kind = serializers.ChoiceField(choices=ContestKind.values, required=False)
        q = serializers.CharField(required=False, help_text="Text in the ID or prompt.")

    @extend_schema(
        operation_id="verdicts_list",
        summary="Verdicts of the project's items (curators), oldest change first",
        parameters=[FilterSerializer, *PAGE_PARAMETERS],
        responses={200: paginated(VerdictSerializer), **errors(400, 401, 403, 404)},
    )
    def get(self, request, slug):
        project = curated_project(request, slug)
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        f = filters.validated_data
        verdicts = _verdicts(project)
        if f["status"] == "stuck":
            verdicts = verdicts.stuck(project)
        elif f["status"] != "all":
            verdicts = verdicts.filter(status=f["status"])
        if f.get("domain"):
            verdicts = verdicts.filter(item__domain__slug=f["domain"])
        if f.get("kind"):
            verdicts = verdicts.filter(contest_kind=f["kind"])
        if f.get("q"):
            q = f["q"]
            verdicts = verdicts.filter(
                Q(item__external_id__icontains=q) | Q(item__prompt__icontains=q)
            )
        is_ranked = ranked.is_ranked(project)
        if is_ranked:
            verdicts = verdicts.prefetch_related("final_ranks")
        return paginate(
            self,
            verdicts.order_by("updated_at", "pk"),
            VerdictSerializer,
            context={"ranked": is_ranked},
        )


class VerdictDetailSerializer(VerdictSerializer):
    class ItemSerializer(serializers.Serializer):
        prompt = serializers.CharField()
        image_path = serializers.CharField(help_text="The image's path in the source dataset.")
        response_1 = serializers.CharField()
        response_2 = serializers.CharField()
        model_1 = serializers.CharField()
        model_2 = serializers.CharField()
        gold_choice = serializers.ChoiceField(choices=OPTIONAL_RESPONSES)
        reference_answer = serializers.CharField()

    class VoteSerializer(serializers.Serializer):
        annotator = serializers.CharField(help_text="The annotator's pseudonym.")
        imported = serializers.BooleanField(
            help_text="A published annotation the import cast as a vote (imported annotator)."
        )
        choice = serializers.CharField(
            help_text="Canonical: a pair's '1', '2' or 'tie'; a best-of-N pick's slot "
            "'1'..'8' or 'none'; '' for a ranking (see ranks)."
        )
        ranks = serializers.ListField(
            child=serializers.IntegerField(allow_null=True),
            help_text="Rankings: the rank per canonical slot (1 = best, ties share, null = "
            "not ranked); [] for other tasks.",
        )
        correct_1 = serializers.CharField()
        correct_2 = serializers.CharField()
        strength = serializers.IntegerField(
            allow_null=True,
            help_text="Graded projects: signed strength oriented to response 1 (3: response 1 "
            "much better … -3: response 2 much better; 0: tie); null for A/B votes.",
        )
        grade_1 = serializers.CharField(help_text="Letter grade of response 1, or ''.")
        grade_2 = serializers.CharField()
        confidence = serializers.IntegerField(allow_null=True)
        rationale = serializers.CharField()
        shown_left = serializers.ChoiceField(
            choices=RESPONSES, help_text="Which response this annotator saw on the left."
        )
        seconds_spent = serializers.FloatField()
        flagged_problem = serializers.BooleanField()
        problem_reason = serializers.CharField()

    item = ItemSerializer()
    current_votes = VoteSerializer(many=True)
    you_voted = serializers.BooleanField(
        help_text="You voted on this item: unless the project allows self-adjudication, "
        "another curator must decide it."
    )
    eligible_annotators = serializers.IntegerField(
        help_text="Annotators who could still vote on it (active, annotator role, never "
        "assigned it): asking for more votes than this leaves the item stuck."
    )
    stuck = serializers.CharField(
        allow_null=True,
        help_text="Why it waits for votes no eligible annotator can give; null if it does not.",
    )


def _verdict_detail(project, item_id: int, user) -> dict:
    is_ranked = ranked.is_ranked(project)
    verdicts = _verdicts(project)
    if is_ranked:
        verdicts = verdicts.prefetch_related("final_ranks")
    verdict = verdicts.filter(item_id=item_id).first()
    if verdict is None:
        raise exceptions.NotFound("No such item.")
    ranks: dict[int, dict[int, int]] = {}
    if project.task == Task.RANKING:
        for judgement_id, slot, rank in JudgementSlot.objects.filter(
            judgement__assignment__item_id=item_id, judgement__is_current=True
        ).values_list("judgement_id", "slot", "rank"):
            ranks.setdefault(judgement_id, {})[slot] = rank
    names = dict(Membership.objects.filter(project=project).values_list("user_id", "pseudonym"))
    votes = []
    you_voted = False
    judgements = Judgement.objects.with_pair_answers().filter(assignment__item_id=item_id)
    for j in judgements.select_related("assignment"):
        a = j.assignment
        you_voted = you_voted or a.annotator_id == user.pk
        if not j.is_current:
            continue
        votes.append(
            {
                "annotator": names.get(a.annotator_id) or f"annotator #{a.annotator_id}",
                "imported": j.imported,
                "choice": j.choice,
                "ranks": _ranks_of(ranks.get(j.pk, {})),
                "correct_1": j.correct_1,
                "correct_2": j.correct_2,
                "strength": j.strength,
                "grade_1": j.grade_1,
                "grade_2": j.grade_2,
                "confidence": j.confidence,
                "rationale": j.rationale,
                # The slot shown first (left): a pair's "1" or "2"; any of N.
                "shown_left": a.display_order[:1],
                "seconds_spent": j.seconds_spent,
                "flagged_problem": j.flagged_problem,
                "problem_reason": j.problem_reason,
            }
        )
    data = VerdictSerializer(verdict, context={"ranked": is_ranked}).data
    stuck = stuck_items(project).filter(pk=item_id).first()
    data.update(
        item=VerdictDetailSerializer.ItemSerializer(verdict.item).data,
        current_votes=votes,
        you_voted=you_voted,
        eligible_annotators=eligible_counts(project=project, item_ids=[item_id])[item_id],
        stuck=stuck_reason(stuck) if stuck is not None else None,
    )
    return data


def _ranks_of(given: dict[int, int]) -> list[int | None]:
    return [given.get(slot) for slot in range(1, max(given, default=0) + 1)]


class VerdictDetailApi(APIView):
    @extend_schema(
        operation_id="verdicts_retrieve",
        summary="One item's verdict with its content, model names, gold and every vote",
        responses={200: VerdictDetailSerializer, **errors(401, 403, 404)},
    )
    def get(self, request, slug, item_id):
        project = curated_project(request, slug)
        return Response(_verdict_detail(project, item_id, request.user))


@guard_body(member_of(CURATOR_ROLES))
class DecisionApi(APIView):
    class InputSerializer(serializers.Serializer):
        action = serializers.ChoiceField(choices=["resolve", "exclude", "more_votes", "reopen"])
        choice = serializers.ChoiceField(
            choices=DECISION_CHOICES,
            required=False,
            help_text="resolve: the better response, or 'tie' (projects that allow ties); "
            "best-of-N projects: the best response's canonical slot '1'..'8'.",
        )
        ranks = serializers.ListField(
            child=serializers.IntegerField(min_value=1, max_value=8),
            min_length=2,
            max_length=8,
            required=False,
            help_text="resolve, ranking projects: the final rank per canonical slot (1 = "
            "best; ties share a rank, e.g. [1, 2, 2, 4]).",
        )
        category = serializers.ChoiceField(
            choices=[c for c in ExclusionCategory.values if c],
            required=False,
            help_text="exclude: why.",
        )
        n = serializers.IntegerField(
            min_value=1, max_value=20, required=False, default=2, help_text="more_votes: how many."
        )
        reason = serializers.CharField(
            max_length=5000, help_text="Required: it goes into the audit trail."
        )
        version = serializers.IntegerField(
            min_value=0, help_text="The verdict version you decided on (from the verdict)."
        )

        def validate(self, data):
            if data["action"] == "resolve" and not (data.get("choice") or data.get("ranks")):
                raise serializers.ValidationError(
                    {"choice": "Choose the better response (or give ranks for a ranking)."}
                )
            if data["action"] == "exclude" and not data.get("category"):
                raise serializers.ValidationError({"category": "Choose why it is excluded."})
            return data

    @extend_schema(
        operation_id="verdicts_decide",
        summary="Decide any open item: resolve, exclude, ask for more votes, reopen",
        description="Same rules as the adjudication page, in any state (an item still "
        "collecting votes stops collecting when resolved or excluded, and goes to the "
        "contested queue when reopened): a reason is required and audited; "
        "a decision on a stale `version` is refused with 409 (code `stale`); a curator who "
        "voted on the item gets 403 (code `conflict_of_interest`) unless the project allows "
        "self-adjudication.",
        request=InputSerializer,
        responses={200: VerdictDetailSerializer, **errors(400, 401, 403, 404, 409)},
    )
    def post(self, request, slug, item_id):
        project = curated_project(request, slug)
        data = validated(self, request)
        common = decision_keywords(request, project, item_id, data)
        with decision_errors():
            if data["action"] == "resolve" and ranked.is_ranked(project):
                resolve_ranked(
                    pick=data.get("choice", "") if project.task == Task.BEST_OF_N else "",
                    ranks=data.get("ranks", ()),
                    **common,
                )
            elif data["action"] == "resolve":
                if "choice" not in data:
                    raise CurationError("Choose response 1, response 2 or a tie.")
                resolve_item(choice=data["choice"], **common)
            elif data["action"] == "exclude":
                exclude_item(category=data["category"], **common)
            elif data["action"] == "more_votes":
                request_more_votes(n=data["n"], **common)
            else:
                reopen_item(**common)
        return Response(_verdict_detail(project, item_id, request.user))
