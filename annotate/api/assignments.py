"""REST API of the annotator's loop (/api/v1/): next assignment, submit, skip.

Annotators are blind here as in the browser: an assignment carries the two
responses in *displayed* order (left/right), never model names, gold, the
item's external ID or anyone's votes; a judgement is sent in displayed terms
and goes to the service as it is: the service maps it to canonical terms
with the assignment's display order after locking it.
"""

from __future__ import annotations

import mimetypes

from django.core.files.storage import default_storage
from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate import checks
from annotate.api.content import ContentSerializer, content_fields
from annotate.api.projects import project_for_api
from annotate.loop import rules, scales
from annotate.loop.groups import group_place
from annotate.loop.service import (
    AnnotationError,
    JudgementInvalid,
    claim_next_item,
    owns_assignment,
    skip_item,
    submit_and_claim_next,
    submit_judgement,
    votes_may_come,
)
from annotate.models import Assignment, AssignmentStatus, Project
from annotate.projects import member_of
from annotate.qualification.service import QualificationRequired
from common.api.errors import Conflict, errors
from common.api.input import validated
from common.api.schema import CORRECTNESS_CHOICES, DISPLAYED_CHOICES, GRADES, PREFERENCE_SCALES
from common.body_guard import guard_body

# --- Annotation ---------------------------------------------------------------------------


class GroupPlaceSerializer(serializers.Serializer):
    position = serializers.IntegerField(help_text="1-based, in the order they come to you.")
    size = serializers.IntegerField()
    label = serializers.CharField(help_text='For display, e.g. "Pair 2 of 4 of this prompt".')


class AssignmentSerializer(serializers.Serializer):
    """An assignment as the annotator sees it: displayed order, nothing that
    would unblind them."""

    class DomainSerializer(serializers.Serializer):
        slug = serializers.SlugField()
        title = serializers.CharField()
        kind = serializers.ChoiceField(
            choices=["correctness", "preference"],
            help_text="correctness: the judgement must also say whether each response is "
            "correct (correct_left / correct_right).",
        )

    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=AssignmentStatus.choices)
    lease_expires_at = serializers.DateTimeField()
    project = serializers.SlugField(help_text="The project's slug.")
    domain = DomainSerializer()
    prompt = serializers.CharField()
    image_url = serializers.CharField(
        allow_null=True,
        help_text=(
            "The prompt's image; fetch it with the same credentials. Null for an item "
            "whose content is not one image and a text prompt: see `content`."
        ),
    )
    image_width = serializers.IntegerField(allow_null=True)
    image_height = serializers.IntegerField(allow_null=True)
    left = serializers.CharField(help_text="The response shown on the left (Markdown).")
    right = serializers.CharField(help_text="The response shown on the right (Markdown).")
    content = ContentSerializer(
        help_text="Prompt and responses as parts (text and images) in order; for an item "
        "of one image and a text prompt, the same as the fields above."
    )
    task = serializers.ChoiceField(
        choices=["pairwise", "best_of_n", "ranking"],
        help_text="What the judgement answers: pairwise (`choice` or `strength`), "
        "best_of_n (`pick`: a response's name in `content.responses`, or none), ranking "
        "(`ranking`: a rank per response in displayed order, ties sharing one).",
    )
    allow_tie = serializers.BooleanField()
    require_rationale = serializers.BooleanField()
    preference_scale = serializers.ChoiceField(
        choices=PREFERENCE_SCALES,
        help_text="ab: send `choice`. graded6 / graded7: send `strength`, one of `scale`.",
    )
    scale = serializers.ListField(
        child=serializers.DictField(),
        help_text="Graded projects: the scale's points in displayed order, each "
        '{"key": 1.., "strength": signed, oriented to the LEFT response, "label"}; '
        "empty for ab.",
    )
    asks_grade = serializers.BooleanField(
        help_text="The judgement must also grade each response A, B or C (grade_left / "
        "grade_right)."
    )
    criterion = serializers.CharField(
        allow_blank=True,
        help_text="The item's own question, to answer about the responses (plain text; "
        "show it above them, escaped); empty for none.",
    )
    group = GroupPlaceSerializer(
        allow_null=True,
        help_text="Where the item sits among its group's items (one prompt's pairs, or one "
        "pair under several criteria), which come to you one after another; null for an "
        "item of its own.",
    )


# The annotator's loop (next, submit) answers with bodies built JSON-ready,
# exactly as AssignmentSerializer / SubmitJudgementApi's output serializers
# would write them (tests/api/test_annotation_api.py holds them equal); the
# serializers document them in the schema. Running the serializers on every
# judgement cost more CPU than the rest of the API's work.
_DATETIME = serializers.DateTimeField()


def assignment_payload(assignment: Assignment, project: Project) -> dict:
    """An assignment as AssignmentSerializer writes it."""
    item = assignment.item
    return {
        "id": assignment.pk,
        "status": assignment.status,
        "lease_expires_at": _DATETIME.to_representation(assignment.lease_expires_at),
        "project": project.slug,
        "domain": {"slug": item.domain.slug, "title": item.domain.title, "kind": item.domain.kind},
        **content_fields(assignment),
        "task": project.task,
        "allow_tie": project.allow_tie,
        "require_rationale": project.require_rationale,
        "preference_scale": project.preference_scale,
        "scale": _scale(project.preference_scale),
        "asks_grade": item.domain.asks_grade,
        "criterion": item.criterion,
        "group": place.as_payload() if (place := group_place(item, project.task)) else None,
    }


def _scale(scale: str) -> list[dict]:
    return [
        {"key": n, "strength": strength, "label": scales.point_label(strength)}
        for n, strength in enumerate(scales.POINTS.get(scale, ()), start=1)
    ]


# How long a client told "more may come" should wait before asking again.
RETRY_AFTER_SECONDS = 15
MORE_MAY_COME = (
    "Nothing is free for you right now, but items you have not seen are still collecting "
    "votes: someone's lease may run out, or a split may ask for more votes. Ask again later."
)


class MoreMayComeSerializer(serializers.Serializer):
    more_may_come = serializers.BooleanField()
    detail = serializers.CharField()


@guard_body(member_of())
class NextAssignmentApi(APIView):
    @extend_schema(
        operation_id="assignments_next",
        summary="Claim the next item to judge (or get your open one back)",
        description="Leases the next item to you, or returns the item you already hold in "
        "this project (one at a time). 204 when you are done for good: no item of the "
        "project still collecting votes is one you were never assigned (only a curator "
        "asking for more votes later can change that). 202 when nothing is free for you "
        "now but more may come (others hold leases that may run out, or votes still "
        "coming may split and escalate): ask again after `Retry-After` seconds. 409 "
        "when the project's task is not pairwise (no vote on more than two responses yet), "
        "or, with code `paused`, when you are paused in this project (your accuracy on its "
        "check items fell below its threshold) until a curator reinstates you.",
        request=None,
        responses={
            200: AssignmentSerializer,
            202: OpenApiResponse(
                MoreMayComeSerializer,
                description="Nothing free for you now; more may come. Ask again later.",
            ),
            204: OpenApiResponse(description="Done: nothing is left for you in this project."),
            **errors(401, 403, 404, 409),
        },
    )
    def post(self, request, slug):
        project, _ = project_for_api(request.user, slug)
        if not project.votes_open:
            raise Conflict(project.votes_closed_reason)
        try:
            assignment = claim_next_item(project=project, annotator=request.user)
        except QualificationRequired as exc:  # (issue 36: not admitted yet)
            raise exceptions.PermissionDenied(str(exc), code="qualification_required") from None
        if assignment is None:
            if (pause := checks.pause_in_force(project, request.user)) is not None:
                raise Conflict(f"You are paused in this project. {pause.reason}", code="paused")
            if votes_may_come(project=project, annotator=request.user):
                return Response(
                    {"more_may_come": True, "detail": MORE_MAY_COME},
                    status=status.HTTP_202_ACCEPTED,
                    headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
                )
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(assignment_payload(_with_item(assignment), project))


def _with_item(assignment: Assignment) -> Assignment:
    """A claimed assignment with its item, domain and image: PostgreSQL's claim
    brings them along, and so does SQLite's fresh claim; its resumed lease
    comes bare."""
    if Assignment.item.is_cached(assignment):
        return assignment
    return Assignment.objects.select_related("item__domain", "item__image").get(pk=assignment.pk)


def _flag(request, name: str) -> bool:
    """A boolean query parameter: true/1/yes or false/0/no (absent: false)."""
    value = request.query_params.get(name, "false").lower()
    if value in ("true", "1", "yes"):
        return True
    if value in ("false", "0", "no", ""):
        return False
    raise exceptions.ValidationError({name: ["Must be true or false."]})


def _own_assignment(request, assignment_id: int, *related: str) -> Assignment:
    """The requester's own assignment in a project they are a member of;
    anyone else's (or a removed member's) is a 404."""
    mine = Assignment.objects.own(request.user).filter(pk=assignment_id)
    assignment = (mine.select_related(*related) if related else mine).first()
    if assignment is None:
        raise exceptions.NotFound("No such assignment.")
    return assignment


class AssignmentDetailApi(APIView):
    @extend_schema(
        operation_id="assignments_retrieve",
        summary="One of your assignments, as shown to you",
        responses={200: AssignmentSerializer, **errors(401, 404)},
    )
    def get(self, request, assignment_id):
        assignment = _own_assignment(
            request, assignment_id, "item__project", "item__domain", "item__image"
        )
        return Response(
            AssignmentSerializer(assignment_payload(assignment, assignment.item.project)).data
        )


class AssignmentImageApi(APIView):
    @extend_schema(
        operation_id="assignments_image",
        summary="The image of one of your assignments",
        responses={
            (200, "image/*"): OpenApiResponse(OpenApiTypes.BINARY, description="The image."),
            **errors(401, 404),
        },
    )
    def get(self, request, assignment_id):
        assignment = _own_assignment(request, assignment_id, "item__image")
        if assignment.item.image is None:
            raise exceptions.NotFound("This item has no prompt image.")
        name = assignment.item.image.file
        content_type, _ = mimetypes.guess_type(name)
        if not default_storage.exists(name):
            raise exceptions.NotFound("The image file is missing.")
        response = FileResponse(
            default_storage.open(name, "rb"),
            content_type=content_type or "application/octet-stream",
        )
        response["Cache-Control"] = "private, max-age=31536000, immutable"
        response["Content-Security-Policy"] = "default-src 'none'"
        return response


@guard_body(owns_assignment)
class SubmitJudgementApi(APIView):
    class InputSerializer(serializers.Serializer):
        choice = serializers.ChoiceField(
            choices=DISPLAYED_CHOICES,
            required=False,
            default="",
            help_text="A/B projects: in displayed terms, as you saw them. Graded projects may "
            "leave it out; sent, it must be the side the strength says (else 400 on `choice`).",
        )
        strength = serializers.IntegerField(
            min_value=-scales.MAX_STRENGTH,
            max_value=scales.MAX_STRENGTH,
            required=False,
            allow_null=True,
            default=None,
            help_text="Graded projects: a point of the scale, oriented to the response shown "
            "on the LEFT (3: left much better … -3: right much better; 0: tie, 7-point only). "
            "Stored oriented to the canonical response 1.",
        )
        grade_left = serializers.ChoiceField(
            choices=GRADES,
            required=False,
            allow_blank=True,
            default="",
            help_text="Domains that ask grades: the left response's letter grade.",
        )
        grade_right = serializers.ChoiceField(
            choices=GRADES, required=False, allow_blank=True, default=""
        )
        correct_left = serializers.ChoiceField(
            choices=CORRECTNESS_CHOICES,
            required=False,
            allow_blank=True,
            default="",
            help_text="Correctness domains only.",
        )
        correct_right = serializers.ChoiceField(
            choices=CORRECTNESS_CHOICES, required=False, allow_blank=True, default=""
        )
        confidence = serializers.IntegerField(
            min_value=1, max_value=3, required=False, allow_null=True, default=None
        )
        rationale = serializers.CharField(
            max_length=5000, required=False, allow_blank=True, default="", trim_whitespace=False
        )
        active_seconds = serializers.FloatField(
            min_value=0, max_value=86400, required=False, default=0.0
        )
        flagged_problem = serializers.BooleanField(required=False, default=False)
        problem_reason = serializers.CharField(
            max_length=500, required=False, allow_blank=True, default=""
        )

        # Best-of-N and ranking projects (issue 33), by the responses' displayed
        # names (A, B, … as `content.responses` lists them).
        pick = serializers.ChoiceField(
            choices=[*rules.POSITION_NAMES, rules.NONE_PICKED],
            required=False,
            help_text="Best-of-N projects: the name of the best response as displayed "
            "(A, B, …), or `none` when none is acceptable. Stored as its canonical slot.",
        )
        ranking = serializers.ListField(
            child=serializers.IntegerField(min_value=1, max_value=rules.MAX_SLOTS),
            min_length=2,
            max_length=rules.MAX_SLOTS,
            required=False,
            help_text="Ranking projects: the rank of each response in displayed order (A "
            "first), 1 = best; tied responses share a rank and the next rank skips (a "
            "competition ranking: [1, 2, 2, 4]). Stored per canonical slot.",
        )
        correct = serializers.ListField(
            child=serializers.ChoiceField(choices=CORRECTNESS_CHOICES),
            required=False,
            help_text="Best-of-N and ranking projects in correctness domains: each "
            "response's label, in displayed order.",
        )
        grades = serializers.ListField(
            child=serializers.ChoiceField(choices=GRADES),
            required=False,
            help_text="Best-of-N and ranking projects in domains that ask grades: each "
            "response's grade, in displayed order.",
        )

        def validate(self, attrs):
            problem = rules.choice_contradiction(attrs.get("choice", ""), attrs.get("strength"))
            if problem:
                raise serializers.ValidationError({"choice": [problem]})
            return attrs

    class OutputSerializer(serializers.Serializer):
        assignment = serializers.IntegerField()
        status = serializers.ChoiceField(choices=AssignmentStatus.choices)
        choice = serializers.ChoiceField(
            choices=DISPLAYED_CHOICES, required=False, help_text="Pairwise projects."
        )
        pick = serializers.CharField(
            required=False, help_text="Best-of-N projects: the response picked as displayed."
        )
        ranking = serializers.ListField(
            child=serializers.IntegerField(),
            required=False,
            help_text="Ranking projects: the ranks in displayed order.",
        )
        strength = serializers.IntegerField(
            required=False,
            help_text="Graded projects only: the point given, oriented to the left response.",
        )
        revision = serializers.IntegerField()
        already_submitted = serializers.BooleanField(
            help_text="True when this assignment was judged before: the stored judgement is "
            "returned unchanged (submits are idempotent)."
        )

    class OutputWithNextSerializer(OutputSerializer):
        """The answer's schema: `next` is there only when asked for."""

        next = AssignmentSerializer(
            required=False,
            allow_null=True,
            help_text="With ?next=true only: your next assignment in the project, claimed "
            "as assignments/next/ would (your open one if you hold one), or null when "
            "nothing is free for you now. Saves a round trip per judgement.",
        )
        more_may_come = serializers.BooleanField(
            required=False,
            help_text="With ?next=true only: when `next` is null, true if more may still "
            "come (ask assignments/next/ again later, as its 202 says), false when you are "
            "done for good (its 204).",
        )

    @extend_schema(
        operation_id="assignments_judgement",
        summary="Submit your judgement (idempotent per assignment)",
        request=InputSerializer,
        parameters=[
            OpenApiParameter(
                "next",
                OpenApiTypes.BOOL,
                description="Also claim your next assignment and return it as `next`.",
                default=False,
            )
        ],
        responses={
            201: OutputWithNextSerializer,
            200: OpenApiResponse(
                OutputWithNextSerializer, description="Already judged; unchanged."
            ),
            **errors(400, 401, 404, 409),
        },
    )
    def post(self, request, assignment_id):
        serializer = self.InputSerializer(data=request.data)
        if not serializer.is_valid():
            # Someone else's assignment is a 404 whatever the body says.
            _own_assignment(request, assignment_id)
            raise exceptions.ValidationError(serializer.errors)
        claim_next = _flag(request, "next")
        data = serializer.validated_data
        # The vote goes as displayed: the service reads and locks the
        # assignment and maps it to canonical terms with its display order.
        vote = _displayed_vote(data)
        try:
            if claim_next:
                # The next item is leased in the vote's transaction (one commit).
                judgement, following = submit_and_claim_next(
                    assignment_id=assignment_id, annotator=request.user, vote=vote
                )
            else:
                judgement = submit_judgement(
                    assignment_id=assignment_id, annotator=request.user, vote=vote
                )
        except Assignment.DoesNotExist:
            raise exceptions.NotFound("No such assignment.") from None
        except JudgementInvalid as exc:
            # By the field names sent (left/right, pick, ranking): the service
            # maps them back.
            raise exceptions.ValidationError(_api_errors(exc.errors)) from None
        except QualificationRequired as exc:
            raise exceptions.PermissionDenied(str(exc), code="qualification_required") from None
        except AnnotationError as exc:
            raise Conflict(str(exc)) from None
        assignment = judgement.assignment
        repeat = judgement.already_submitted
        body = {
            "assignment": assignment.pk,
            "status": AssignmentStatus.SUBMITTED,
            "revision": judgement.revision,
            "already_submitted": repeat,
        }
        if judgement.task in rules.N_SLOT_TASKS:
            body.update(_displayed_slot_answer(judgement, assignment.display_order))
        else:
            body["choice"] = rules.displayed_choice(
                judgement.choice, swapped=assignment.shown_swapped
            )
        if judgement.strength is not None:
            body["strength"] = rules.canonical_strength(
                judgement.strength, swapped=assignment.shown_swapped
            )
        if claim_next:
            project = assignment.item.project
            body["next"] = following and assignment_payload(_with_item(following), project)
            body["more_may_come"] = following is not None or votes_may_come(
                project=project, annotator=request.user
            )
        # As OutputSerializer (OutputWithNextSerializer) writes it.
        return Response(body, status=status.HTTP_200_OK if repeat else status.HTTP_201_CREATED)


def _displayed_vote(data: dict) -> rules.DisplayedVote:
    """The DisplayedVote of an API body: a pick or a ranking by displayed
    position when one is sent (the service refuses it with `task` if the
    project's task is another), else a pair's answer."""
    pick, ranking = data.pop("pick", None), data.pop("ranking", None)
    correct, grades = tuple(data.pop("correct", ())), tuple(data.pop("grades", ()))
    if pick is None and ranking is None:
        return rules.DisplayedVote(**data)
    for pair_field in ("choice", "strength", "grade_left", "grade_right", "correct_left"):
        data.pop(pair_field, None)
    data.pop("correct_right", None)
    if ranking is not None:
        return rules.DisplayedVote(
            task=rules.RANKING,
            ranks=tuple(ranking),
            slot_correct=correct,
            slot_grades=grades,
            **data,
        )
    position = pick if pick == rules.NONE_PICKED else str(rules.POSITION_NAMES.index(pick) + 1)
    return rules.DisplayedVote(
        task=rules.BEST_OF_N, pick=position, slot_correct=correct, slot_grades=grades, **data
    )


# The services' displayed field names as the API's body names them.
_API_FIELDS = {"ranks": "ranking", "slot_correct": "correct", "slot_grades": "grades"}


def _api_errors(errors: dict[str, str]) -> dict[str, list[str]]:
    shown: dict[str, list[str]] = {}
    for name, message in errors.items():
        head, _, position = name.rpartition("_")
        key = _API_FIELDS.get(head if position.isdecimal() else name, name)
        shown.setdefault(key, []).append(message)
    return shown


def _displayed_slot_answer(judgement, order: str) -> dict:
    """A stored pick or ranking as the annotator gave it (by displayed name / position)."""
    if judgement.task == rules.BEST_OF_N:
        if judgement.choice == rules.NONE_PICKED:
            return {"pick": rules.NONE_PICKED}
        return {"pick": rules.POSITION_NAMES[order.index(judgement.choice)]}
    ranks = dict(judgement.slots.values_list("slot", "rank"))
    return {"ranking": [ranks.get(slot) for slot in rules.displayed_slots(order)]}


@guard_body(owns_assignment)
class SkipAssignmentApi(APIView):
    class InputSerializer(serializers.Serializer):
        reason = serializers.CharField(max_length=500, help_text="Why you skip this item.")

    class OutputSerializer(serializers.Serializer):
        assignment = serializers.IntegerField()
        status = serializers.ChoiceField(choices=AssignmentStatus.choices)

    @extend_schema(
        operation_id="assignments_skip",
        summary="Give an item back; it is never offered to you again",
        request=InputSerializer,
        responses={200: OutputSerializer, **errors(400, 401, 404, 409)},
    )
    def post(self, request, assignment_id):
        # Someone else's assignment is a 404 whatever the body says.
        _own_assignment(request, assignment_id)
        data = validated(self, request)
        try:
            assignment = skip_item(
                assignment_id=assignment_id,
                annotator=request.user,
                reason=data["reason"],
            )
        except Assignment.DoesNotExist:
            raise exceptions.NotFound("No such assignment.") from None
        except JudgementInvalid as exc:
            raise exceptions.ValidationError({"reason": list(exc.errors.values())}) from None
        except AnnotationError as exc:
            raise Conflict(str(exc)) from None
        return Response(
            self.OutputSerializer({"assignment": assignment.pk, "status": assignment.status}).data
        )
