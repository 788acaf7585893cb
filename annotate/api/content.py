"""An assignment's content as parts in the API (issue 24): the prompt and
the left and right responses as lists of text and images, in order, and the
endpoint serving the images. Blind as the rest: an image is named by its
assignment and where it is displayed (prompt, left or right, and its place
there), never by a path or a file name (those may name a model), nor by its
canonical index among the item's images: that numbers response 1's images
before response 2's and so would tell a client which side is response A
(issue 29)."""

from __future__ import annotations

import mimetypes

from django.core.files.storage import default_storage
from django.http import FileResponse, Http404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers
from rest_framework.fields import SkipField
from rest_framework.views import APIView

from annotate.loop import rules
from annotate.loop.service import parts_to_send
from annotate.models import Assignment, ItemPart, MediaAsset, PartKind, Slot
from annotate.models.parts import TEXT_JOINER, is_mrb_shaped, response_slot, response_slots
from common.api.errors import errors


class PresentOrNull(serializers.CharField):
    """A URL that is null until made, and absent where the part's kind has
    none (a video has no waveform)."""

    def get_attribute(self, instance):
        if self.field_name not in instance:
            raise SkipField
        return super().get_attribute(instance)


class PartSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=PartKind.choices)
    text = serializers.CharField(
        required=False, allow_blank=True, help_text="A text part's Markdown."
    )
    url = serializers.CharField(
        required=False,
        help_text="An image, video or audio part; fetch it with the same credentials "
        "(video and audio answer byte ranges).",
    )
    width = serializers.IntegerField(required=False)
    height = serializers.IntegerField(required=False)
    duration_ms = serializers.IntegerField(required=False, help_text="A video or audio part.")
    fps = serializers.FloatField(required=False, help_text="A video part.")
    content_type = serializers.CharField(required=False, help_text="A video or audio part.")
    loudness_db = serializers.FloatField(
        required=False,
        help_text="An audio part's integrated loudness in dB (null until measured after "
        "the import).",
    )
    poster_url = PresentOrNull(
        required=False,
        allow_null=True,
        help_text="A video part's still (WebP; null until made in the background after the "
        "import).",
    )
    strip_url = PresentOrNull(
        required=False,
        allow_null=True,
        help_text="A video part's strip of eight thumbnails (WebP; null until made).",
    )
    waveform_url = PresentOrNull(
        required=False,
        allow_null=True,
        help_text="An audio part's waveform image (WebP; null until made).",
    )


class ShownResponseSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="A, B, C, … in display order.")
    parts = PartSerializer(many=True)


class ContentSerializer(serializers.Serializer):
    prompt = PartSerializer(many=True)
    left = PartSerializer(
        many=True, help_text="The response shown on the left, in order (a pair; else empty)."
    )
    right = PartSerializer(
        many=True, help_text="The response shown on the right, in order (a pair; else empty)."
    )
    responses = ShownResponseSerializer(
        many=True,
        required=False,
        help_text="An item of more than two responses (a best-of-N or ranking project): "
        "each response in display order. Absent for a pair.",
    )


def _image(url: str, image) -> dict:
    return {"kind": "image", "url": url, "width": image.width, "height": image.height}


def _media(url: str, media: MediaAsset) -> dict:
    """A video or audio part as the API gives it (issue 35): never its file
    name or source path."""
    shown = {"kind": media.kind, "url": url, "duration_ms": media.duration_ms,
             "content_type": media.content_type}  # fmt: skip
    if media.kind == PartKind.VIDEO:
        shown.update(width=media.width, height=media.height, fps=media.fps)
    else:
        shown["loudness_db"] = media.loudness_db
    for derivative in MEDIA_DERIVATIVES[media.kind]:
        made = getattr(media, DERIVATIVE_FIELDS[derivative])
        shown[f"{derivative}_url"] = f"{url}{derivative}/" if made else None
    return shown


# What the background derivation makes of each kind (annotate.tasks.derive_media),
# by the name in its URL, and the MediaAsset field holding its stored name.
MEDIA_DERIVATIVES = {PartKind.VIDEO: ("poster", "strip"), PartKind.AUDIO: ("waveform",)}
DERIVATIVE_FIELDS = {"poster": "poster", "strip": "strip", "waveform": "waveform"}


def content_fields(assignment: Assignment) -> dict:
    """The assignment's content in displayed order, read from the item's
    parts (one statement): `content` (prompt, left, right as parts; for an item
    of more than two responses `responses` in display order, left and right
    empty) and the flat fields of the API's first version, derived from the
    same parts: `prompt`, `left`, `right` (each slot's text parts joined, as
    the Item's derived columns are; "" for left and right beside more than
    two responses) and `image_url`/`image_width`/`image_height` (the prompt's
    image of an item of the MRB shape, served at api_assignment_image, the
    URL its part has in `content` too; null otherwise)."""
    by_slot = parts_to_send(assignment.item)
    mrb_image = by_slot[Slot.PROMPT][0].image if is_mrb_shaped(by_slot) else None
    image_url = reverse("api_assignment_image", args=[assignment.pk]) if mrb_image else None
    place_of = displayed_places(assignment, len(response_slots(by_slot)))
    counts = dict.fromkeys(place_of.values(), 0)
    media_counts = dict.fromkeys(place_of.values(), 0)
    media_ids = [p.media_id for parts in by_slot.values() for p in parts if p.media_id]
    media = MediaAsset.objects.in_bulk(media_ids) if media_ids else {}  # one statement
    shown: dict[str, list[dict]] = {}
    for slot in place_of:
        shown[slot] = []
        for part in by_slot.get(slot, ()):
            if part.media_id is not None:
                place = place_of[slot]
                url = reverse(
                    "api_assignment_part_media", args=[assignment.pk, place, media_counts[place]]
                )
                shown[slot].append(_media(url, media[part.media_id]))
                media_counts[place] += 1
            elif part.kind == PartKind.IMAGE:
                place = place_of[slot]
                url = image_url if mrb_image else None
                if url is None:
                    url = reverse(
                        "api_assignment_part_image", args=[assignment.pk, place, counts[place]]
                    )
                shown[slot].append(_image(url, part.image))
                counts[place] += 1
            else:
                shown[slot].append({"kind": "text", "text": part.text})

    def text(parts: list[dict]) -> str:
        return TEXT_JOINER.join(p["text"] for p in parts if p["kind"] == "text")

    if len(place_of) != 3:  # more than two responses: named A, B, C, … as displayed
        responses = [
            {"name": place.upper(), "parts": shown[slot]}
            for slot, place in place_of.items()
            if slot != Slot.PROMPT
        ]
        content = {"prompt": shown[Slot.PROMPT], "left": [], "right": []}
        return {
            "prompt": text(shown[Slot.PROMPT]),
            "image_url": None,
            "image_width": None,
            "image_height": None,
            "left": "",
            "right": "",
            "content": {**content, "responses": responses},
        }
    left, right = rules.displayed_pair(
        shown[Slot.RESPONSE_1], shown[Slot.RESPONSE_2], swapped=assignment.shown_swapped
    )
    return {
        "prompt": text(shown[Slot.PROMPT]),
        "image_url": image_url,
        "image_width": mrb_image.width if mrb_image else None,
        "image_height": mrb_image.height if mrb_image else None,
        "left": text(left),
        "right": text(right),
        "content": {"prompt": shown[Slot.PROMPT], "left": left, "right": right},
    }


# Where a pair's parts are displayed; an item of more responses names them
# by their displayed letter, in lower case (a, b, c, …).
PLACES = ("prompt", "left", "right")


def displayed_places(assignment: Assignment, n_responses: int = 2) -> dict[str, str]:
    """Each slot's displayed place for this assignment, in display order:
    prompt, left, right for a pair; prompt, a, b, c, … for more responses
    (in the assignment's display order, or canonical order if it is not a
    permutation of that many slots)."""
    if n_responses == 2:
        left, right = rules.displayed_pair(
            Slot.RESPONSE_1, Slot.RESPONSE_2, swapped=assignment.shown_swapped
        )
        return {Slot.PROMPT: "prompt", left: "left", right: "right"}
    order = assignment.display_order
    shown = (
        rules.displayed_slots(order)
        if rules.is_order(order, n_responses)
        else range(1, n_responses + 1)
    )
    places = {Slot.PROMPT.value: "prompt"}
    for k, slot in enumerate(shown):
        places[response_slot(slot)] = "abcdefghi"[k]
    return places


def _part_at(request, assignment_id: int, place: str, index: int, kinds, related: str):
    """The `index`-th part of `kinds` displayed at `place` in one of the
    user's assignments, with its `related` file (404 if any of it is not
    there)."""
    assignment = Assignment.objects.own(request.user).filter(pk=assignment_id).first()
    if assignment is None:
        raise exceptions.NotFound("No such assignment.")
    slot = _slot_at(assignment, place)
    return (
        ItemPart.objects.filter(item_id=assignment.item_id, slot=slot, kind__in=kinds)
        .select_related(related)
        .order_by("position")[index : index + 1]
        .first()
    )


def _slot_at(assignment: Assignment, place: str) -> str:
    """The canonical slot displayed at `place` for this assignment (404 if none)."""
    if place in PLACES and rules.is_order(assignment.display_order, 2):
        places = displayed_places(assignment)  # a pair (no query)
    else:  # the places of an item of more responses: a, b, c, …
        responses = ItemPart.objects.filter(item_id=assignment.item_id).exclude(slot=Slot.PROMPT)
        n_responses = responses.values("slot").distinct().count()
        places = displayed_places(assignment, max(n_responses, 2))
    slot = {shown: slot for slot, shown in places.items()}.get(place)
    if slot is None:
        raise exceptions.NotFound(f"No such place: {', '.join(places.values())}.")
    return slot


class AssignmentPartMediaApi(APIView):
    @extend_schema(
        operation_id="assignments_part_media",
        summary="One video or audio file of one of your assignments, by where it is displayed",
        description="`place` is prompt, left or right (as displayed to you; a, b, c, … for "
        "more responses), `index` the file's position among that place's videos and audio "
        "files (0 first). Byte ranges are answered (206), as players need to seek. Take the "
        "URLs from the assignment's `content`.",
        responses={
            (200, "video/*"): OpenApiResponse(OpenApiTypes.BINARY, description="The file."),
            **errors(401, 404),
        },
    )
    def get(self, request, assignment_id, place, index, derivative=None):
        from common.serving import stored_file_response

        kinds = [PartKind.VIDEO, PartKind.AUDIO]
        part = _part_at(request, assignment_id, place, index, kinds, "media")
        if part is None:
            raise exceptions.NotFound("No such video or audio file.")
        name, content_type = part.media.file, part.media.content_type
        if derivative is not None:
            if derivative not in MEDIA_DERIVATIVES[part.media.kind]:
                made = ", ".join(MEDIA_DERIVATIVES[part.media.kind])
                raise exceptions.NotFound(f"No such image of a {part.media.kind} part: {made}.")
            name, content_type = getattr(part.media, DERIVATIVE_FIELDS[derivative]), "image/webp"
            if not name:
                raise exceptions.NotFound(f"The {derivative} is not made yet: try again shortly.")
        try:
            return stored_file_response(request, name, content_type)
        except Http404:
            raise exceptions.NotFound("The file is missing.") from None


class AssignmentPartMediaImageApi(AssignmentPartMediaApi):
    @extend_schema(
        operation_id="assignments_part_media_image",
        summary="A video's poster or thumbnail strip, or an audio file's waveform",
        description="`derivative` is poster or strip (a video) or waveform (an audio file), "
        "made in the background after the import (404 until then). Take the URLs from the "
        "assignment's `content` (`poster_url`, `strip_url`, `waveform_url`).",
        responses={
            (200, "image/webp"): OpenApiResponse(OpenApiTypes.BINARY, description="The image."),
            **errors(401, 404),
        },
    )
    def get(self, request, assignment_id, place, index, derivative):
        return super().get(request, assignment_id, place, index, derivative)


class AssignmentPartImageApi(APIView):
    @extend_schema(
        operation_id="assignments_part_image",
        summary="One image of one of your assignments, by where it is displayed",
        description="`place` is prompt, left or right (as displayed to you), `index` the "
        "image's position among that place's images (0 first). Take the URLs from the "
        "assignment's `content`.",
        responses={
            (200, "image/*"): OpenApiResponse(OpenApiTypes.BINARY, description="The image."),
            **errors(401, 404),
        },
    )
    def get(self, request, assignment_id, place, index):
        part = _part_at(request, assignment_id, place, index, [PartKind.IMAGE], "image")
        if part is None:
            raise exceptions.NotFound("No such image.")
        name = part.image.file
        if not default_storage.exists(name):
            raise exceptions.NotFound("The image file is missing.")
        content_type, _ = mimetypes.guess_type(name)
        response = FileResponse(
            default_storage.open(name, "rb"),
            content_type=content_type or "application/octet-stream",
        )
        response["Cache-Control"] = "private, max-age=31536000, immutable"
        response["Content-Security-Policy"] = "default-src 'none'"
        return response
