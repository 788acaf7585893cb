"""REST API of the annotate app (/api/v1/): projects, domains, import, and the
annotator's loop (next assignment, submit, skip). One APIView per endpoint
with its own input and output serializers; the work is done by the same
services as the HTML views (annotate.services).

Annotators are blind here as in the browser: an assignment carries the two
responses in *displayed* order (left/right), never model names, gold, the
item's external ID or anyone's votes; a judgement is sent in displayed terms
and turned into canonical ones before it reaches the service.
"""

from __future__ import annotations

import mimetypes

from django.core.files.storage import default_storage
from django.db.models import OuterRef, Subquery, Value
from django.http import FileResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from common.api.errors import Conflict, Rejected, errors
from common.api.paging import PAGE_PARAMETERS, paginate, paginated
from common.api.schema import CORRECTNESS_CHOICES, DISPLAYED_CHOICES

from .importing import FORMATS, ImportFailed
from .models import Assignment, AssignmentStatus, Domain, Membership, Project, Role
from .permissions import ADMIN_ROLES
from .services import (
    AnnotationError,
    JudgementInvalid,
    Vote,
    claim_next_item,
    import_uploaded_items,
    own_assignments,
    skip_item,
    submit_and_claim_next,
    submit_judgement,
    votes_may_come,
)

# --- Access -------------------------------------------------------------------------------


def project_for_api(user, slug: str, roles: tuple[str, ...] | None = None) -> tuple[Project, str]:
    """The project and the user's role in it, in one query. A stranger gets
    404 (the project's existence is not revealed), a member without one of
    `roles` 403 — the same rule as annotate.permissions.project_for."""
    projects = Project.objects.filter(slug=slug)
    if user.is_superuser:
        projects = projects.annotate(member_role=Value(Role.ADMIN))
    else:
        projects = projects.annotate(
            member_role=Subquery(
                Membership.objects.filter(project=OuterRef("pk"), user=user, is_active=True).values(
                    "role"
                )[:1]
            )
        )
    project = projects.first()
    role: str | None = getattr(project, "member_role", None)  # the annotation above
    if project is None or role is None:
        raise exceptions.NotFound("No such project.")
    if roles is not None and role not in roles:
        raise exceptions.PermissionDenied("Your role in this project does not allow this.")
    return project, role


# --- Projects and domains -----------------------------------------------------------------


class ProjectListApi(APIView):
    class OutputSerializer(serializers.Serializer):
        slug = serializers.SlugField()
        name = serializers.CharField()
        description = serializers.CharField()
        guidelines = serializers.CharField(help_text="Markdown.")
        role = serializers.ChoiceField(choices=Role.choices, source="member_role")
        votes_per_item = serializers.IntegerField()
        allow_tie = serializers.BooleanField()
        require_rationale = serializers.BooleanField()

    @extend_schema(
        operation_id="projects_list",
        summary="Projects you are a member of, with your role",
        responses={200: paginated(OutputSerializer), **errors(401, 404)},
        parameters=PAGE_PARAMETERS,
    )
    def get(self, request):
        user = request.user
        if user.is_superuser:
            projects = Project.objects.annotate(member_role=Value(Role.ADMIN))
        else:
            projects = Project.objects.filter(
                memberships__user=user, memberships__is_active=True
            ).annotate(
                member_role=Subquery(
                    Membership.objects.filter(project=OuterRef("pk"), user=user).values("role")[:1]
                )
            )
        return paginate(self, projects.order_by("name", "pk"), self.OutputSerializer)


class DomainListApi(APIView):
    class OutputSerializer(serializers.Serializer):
        slug = serializers.SlugField()
        title = serializers.CharField()
        export_category = serializers.CharField(help_text="The release's Category string.")
        kind = serializers.ChoiceField(choices=["correctness", "preference"])
        guidelines = serializers.CharField(help_text="Markdown.")

    @extend_schema(
        operation_id="domains_list",
        summary="The project's domains",
        responses={200: paginated(OutputSerializer), **errors(401, 404)},
        parameters=PAGE_PARAMETERS,
    )
    def get(self, request, slug):
        project, _ = project_for_api(request.user, slug)
        domains = Domain.objects.filter(project=project).order_by("position", "slug")
        return paginate(self, domains, self.OutputSerializer)


# --- Import -------------------------------------------------------------------------------


class ImportApi(APIView):
    parser_classes = [MultiPartParser]

    class InputSerializer(serializers.Serializer):
        dataset = serializers.FileField(
            help_text="Multimodal RewardBench .json, chosen/rejected .jsonl, or a .zip "
            "holding one of them together with its images."
        )
        images = serializers.FileField(
            required=False, help_text="A .zip of the images (with a .json/.jsonl dataset)."
        )
        format = serializers.ChoiceField(
            choices=["", *FORMATS], required=False, default="", help_text="Empty: detect."
        )
        domain = serializers.CharField(
            required=False, default="", help_text="Domain slug for files without a category."
        )
        field_map = serializers.CharField(
            required=False,
            default="",
            help_text="ours=theirs pairs, one per line or comma-separated (e.g. prompt=query).",
        )
        gold_from_label = serializers.BooleanField(required=False, default=False)
        update = serializers.BooleanField(
            required=False, default=False, help_text="Replace changed items nobody has claimed."
        )

        def validate_dataset(self, f):
            if not f.name.lower().endswith((".json", ".jsonl", ".zip")):
                raise serializers.ValidationError("Upload a .json, .jsonl or .zip file.")
            return f

        def validate_images(self, f):
            if f and not f.name.lower().endswith(".zip"):
                raise serializers.ValidationError("Images must be uploaded as a .zip file.")
            return f

        def validate_field_map(self, text):
            mapping = {}
            for n, part in enumerate(text.replace(",", "\n").splitlines(), start=1):
                if not part.strip():
                    continue
                ours, sep, theirs = part.partition("=")
                if not sep or not ours.strip() or not theirs.strip():
                    raise serializers.ValidationError(f"Entry {n} is not ours=theirs: {part!r}")
                mapping[ours.strip()] = theirs.strip()
            return mapping

        def validate(self, data):
            images = data.get("images")
            if images and data["dataset"].name.lower().endswith(".zip"):
                raise serializers.ValidationError(
                    {
                        "images": "The dataset zip already holds its images; send an images "
                        "zip only with a .json or .jsonl dataset."
                    }
                )
            return data

    class OutputSerializer(serializers.Serializer):
        format = serializers.ChoiceField(choices=FORMATS)
        created = serializers.IntegerField()
        updated = serializers.IntegerField()
        unchanged = serializers.IntegerField()
        images_stored = serializers.IntegerField()

    @extend_schema(
        operation_id="items_import",
        summary="Import items (admins): all or nothing",
        description="Every record and image is checked first; if anything is wrong the answer "
        "is 400 with code `import_failed`, one entry in `problems` per problem (file, line, "
        "record, field) and nothing is written. Importing the same file again changes nothing.",
        request={"multipart/form-data": InputSerializer},
        responses={200: OutputSerializer, **errors(400, 401, 403, 404, 413)},
    )
    def post(self, request, slug):
        project, _ = project_for_api(request.user, slug, ADMIN_ROLES)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            result = import_uploaded_items(
                project=project,
                dataset=data["dataset"],
                images=data.get("images"),
                fmt=data["format"] or None,
                domain=data["domain"] or None,
                field_map=data["field_map"],
                gold_from_label=data["gold_from_label"],
                update=data["update"],
            )
        except ImportFailed as exc:
            message = f"The import was refused ({len(exc.problems)} problems); nothing was written."
            if exc.truncated:
                message += f" Stopped looking after {len(exc.problems)} problems."
            raise Rejected(
                message,
                code="import_failed",
                fields={"dataset": [str(p) for p in exc.problems]},
                problems=[
                    {
                        "file": p.file,
                        "line": p.line,
                        "index": p.index,
                        "field": p.field,
                        "message": p.message,
                    }
                    for p in exc.problems
                ],
            ) from None
        return Response(self.OutputSerializer(result).data)


# --- Annotation ---------------------------------------------------------------------------


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
        help_text="The prompt's image; fetch it with the same credentials."
    )
    image_width = serializers.IntegerField()
    image_height = serializers.IntegerField()
    left = serializers.CharField(help_text="The response shown on the left (Markdown).")
    right = serializers.CharField(help_text="The response shown on the right (Markdown).")
    allow_tie = serializers.BooleanField()
    require_rationale = serializers.BooleanField()


# The annotator's loop (next, submit) answers with bodies built JSON-ready,
# exactly as AssignmentSerializer / SubmitJudgementApi's output serializers
# would write them (tests/api/test_annotation_api.py holds them equal); the
# serializers document them in the schema. Running the serializers on every
# judgement cost more CPU than the rest of the API's work.
_DATETIME = serializers.DateTimeField()


def assignment_payload(assignment: Assignment, project: Project) -> dict:
    """An assignment as AssignmentSerializer writes it."""
    item = assignment.item
    left, right = (
        (item.response_2, item.response_1)
        if assignment.shown_swapped
        else (item.response_1, item.response_2)
    )
    return {
        "id": assignment.pk,
        "status": assignment.status,
        "lease_expires_at": _DATETIME.to_representation(assignment.lease_expires_at),
        "project": project.slug,
        "domain": {"slug": item.domain.slug, "title": item.domain.title, "kind": item.domain.kind},
        "prompt": item.prompt,
        "image_url": reverse("api_assignment_image", args=[assignment.pk]),
        "image_width": item.image.width,
        "image_height": item.image.height,
        "left": left,
        "right": right,
        "allow_tie": project.allow_tie,
        "require_rationale": project.require_rationale,
    }


# How long a client told "more may come" should wait before asking again.
RETRY_AFTER_SECONDS = 15
MORE_MAY_COME = (
    "Nothing is free for you right now, but items you have not seen are still collecting "
    "votes: someone's lease may run out, or a split may ask for more votes. Ask again later."
)


class MoreMayComeSerializer(serializers.Serializer):
    more_may_come = serializers.BooleanField()
    detail = serializers.CharField()


class NextAssignmentApi(APIView):
    @extend_schema(
        operation_id="assignments_next",
        summary="Claim the next item to judge (or get your open one back)",
        description="Leases the next item to you, or returns the item you already hold in "
        "this project (one at a time). 204 when you are done for good: no item of the "
        "project still collecting votes is one you were never assigned (only a curator "
        "asking for more votes later can change that). 202 when nothing is free for you "
        "now but more may come (others hold leases that may run out, or votes still "
        "coming may split and escalate): ask again after `Retry-After` seconds.",
        request=None,
        responses={
            200: AssignmentSerializer,
            202: OpenApiResponse(
                MoreMayComeSerializer,
                description="Nothing free for you now; more may come. Ask again later.",
            ),
            204: OpenApiResponse(description="Done: nothing is left for you in this project."),
            **errors(401, 404),
        },
    )
    def post(self, request, slug):
        project, _ = project_for_api(request.user, slug)
        assignment = claim_next_item(project=project, annotator=request.user)
        if assignment is None:
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
    mine = own_assignments(request.user).filter(pk=assignment_id)
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


class SubmitJudgementApi(APIView):
    class InputSerializer(serializers.Serializer):
        choice = serializers.ChoiceField(
            choices=DISPLAYED_CHOICES, help_text="In displayed terms, as you saw them."
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

    class OutputSerializer(serializers.Serializer):
        assignment = serializers.IntegerField()
        status = serializers.ChoiceField(choices=AssignmentStatus.choices)
        choice = serializers.ChoiceField(choices=DISPLAYED_CHOICES)
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
        # The service reads and locks the assignment (with its item and
        # project) and hands it here to map displayed sides to canonical ones:
        # nothing is read before it.
        seen: list[Assignment] = []

        def vote_for(assignment: Assignment) -> Vote:
            seen.append(assignment)
            to_canon = assignment.displayed_to_canonical
            correct = {
                to_canon("left"): data["correct_left"],
                to_canon("right"): data["correct_right"],
            }
            return Vote(
                choice="tie" if data["choice"] == "tie" else to_canon(data["choice"]),
                correct_1=correct["1"],
                correct_2=correct["2"],
                confidence=data["confidence"],
                rationale=data["rationale"],
                active_seconds=data["active_seconds"],
                flagged_problem=data["flagged_problem"],
                problem_reason=data["problem_reason"],
            )

        try:
            if claim_next:
                # The next item is leased in the vote's transaction (one commit).
                judgement, following = submit_and_claim_next(
                    assignment_id=assignment_id, annotator=request.user, vote=vote_for
                )
            else:
                judgement = submit_judgement(
                    assignment_id=assignment_id, annotator=request.user, vote=vote_for
                )
        except Assignment.DoesNotExist:
            raise exceptions.NotFound("No such assignment.") from None
        except JudgementInvalid as exc:
            to_canon = seen[0].displayed_to_canonical
            names = {"correct_" + to_canon("left"): "correct_left"}
            names["correct_" + to_canon("right")] = "correct_right"
            fields = {names.get(k, k): [v] for k, v in exc.errors.items()}
            raise exceptions.ValidationError(fields) from None
        except AnnotationError as exc:
            raise Conflict(str(exc)) from None
        assignment = judgement.assignment
        shown = "tie"
        if judgement.choice != "tie":
            left = assignment.displayed_to_canonical("left")
            shown = "left" if left == judgement.choice else "right"
        repeat = judgement.already_submitted
        body = {
            "assignment": assignment.pk,
            "status": AssignmentStatus.SUBMITTED,
            "choice": shown,
            "revision": judgement.revision,
            "already_submitted": repeat,
        }
        if claim_next:
            project = assignment.item.project
            body["next"] = following and assignment_payload(_with_item(following), project)
            body["more_may_come"] = following is not None or votes_may_come(
                project=project, annotator=request.user
            )
        # As OutputSerializer (OutputWithNextSerializer) writes it.
        return Response(body, status=status.HTTP_200_OK if repeat else status.HTTP_201_CREATED)


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
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            assignment = skip_item(
                assignment_id=assignment_id,
                annotator=request.user,
                reason=serializer.validated_data["reason"],
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
