"""Items and their images.

Canonical order: `response_1`/`response_2` are stored in import order and every
judgement stores its choice in those canonical terms. What the annotator saw on
the left is a display detail kept on the Assignment (`shown_swapped`).
"""

from __future__ import annotations

import hashlib

from django.db import models
from django.db.models import F, Q
from django.urls import reverse

from annotate.models.projects import Domain, Project


class ImageAsset(models.Model):
    """An image stored once, named by the SHA-256 of its stored bytes."""

    sha256 = models.CharField(max_length=64, unique=True)
    file = models.CharField(max_length=200, help_text="Path in the default storage.")
    format = models.CharField(max_length=10)
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()
    size_bytes = models.PositiveBigIntegerField()
    thumbnail = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            # \A and \Z, not ^ and $: SQLite's REGEXP is Python's re.search,
            # where $ also matches before a trailing newline.
            models.CheckConstraint(
                condition=Q(sha256__regex=r"\A[0-9a-f]{64}\Z"), name="annotate_image_sha256_hex"
            ),
            models.CheckConstraint(
                condition=Q(width__gt=0, height__gt=0), name="annotate_image_dimensions_positive"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.sha256[:12]} {self.format} {self.width}x{self.height}"

    # Through the `media` view, never the storage's own URL: on object storage
    # that would be a presigned link to the bucket, bypassing the sign-in and
    # the view's safety headers.
    @property
    def url(self) -> str:
        return reverse("media", args=[self.file])

    @property
    def thumbnail_url(self) -> str:
        return reverse("media", args=[self.thumbnail or self.file])


class MediaKind(models.TextChoices):
    VIDEO = "video", "Video"
    AUDIO = "audio", "Audio"


class MediaAsset(models.Model):
    """A video or audio file stored once, named by the SHA-256 of its stored
    bytes (issue 35), as ImageAsset is for pictures. What PyAV found when the
    import validated it is kept here, so pages, judges and exports never probe
    the file again. The poster, thumbnail strip and waveform are made by a
    background task after the import (blank until then: pages show the
    player without them)."""

    sha256 = models.CharField(max_length=64, unique=True)
    kind = models.CharField(max_length=5, choices=MediaKind.choices)
    file = models.CharField(max_length=200, help_text="Path in the default storage.")
    container = models.CharField(max_length=20, help_text="mp4, webm, ogg, wav, mp3, flac, …")
    content_type = models.CharField(max_length=50, help_text="The type it is served with.")
    video_codec = models.CharField(max_length=20, blank=True)
    audio_codec = models.CharField(max_length=20, blank=True)
    duration_ms = models.PositiveIntegerField()
    # Video only (0 and None for audio).
    width = models.PositiveIntegerField(default=0)
    height = models.PositiveIntegerField(default=0)
    fps = models.FloatField(null=True, blank=True)
    # Audio (of an audio file, or a video's sound track).
    sample_rate = models.PositiveIntegerField(default=0)
    channels = models.PositiveSmallIntegerField(default=0)
    # Integrated loudness in dB (LUFS-like, measured when the derivatives are made).
    loudness_db = models.FloatField(null=True, blank=True)
    stream_count = models.PositiveSmallIntegerField(default=1)
    size_bytes = models.PositiveBigIntegerField()
    # Derivatives (storage paths; blank until made).
    poster = models.CharField(max_length=200, blank=True, help_text="WebP still (video).")
    strip = models.CharField(
        max_length=200, blank=True, help_text="WebP strip of thumbnails (video)."
    )
    waveform = models.CharField(max_length=200, blank=True, help_text="Waveform image (audio).")
    derived_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            # \A and \Z: see ImageAsset's constraint.
            models.CheckConstraint(
                condition=Q(sha256__regex=r"\A[0-9a-f]{64}\Z"), name="annotate_media_sha256_hex"
            ),
            models.CheckConstraint(
                condition=Q(kind=MediaKind.AUDIO) | Q(width__gt=0, height__gt=0),
                name="annotate_media_video_dimensions_positive",
            ),
        ]

    def __str__(self) -> str:
        size = f" {self.width}x{self.height}" if self.kind == MediaKind.VIDEO else ""
        return f"{self.sha256[:12]} {self.kind} {self.container}{size} {self.duration_ms} ms"

    # Through the `media` view (sign-in and membership checked), as images.
    @property
    def url(self) -> str:
        return reverse("media", args=[self.file])

    @property
    def poster_url(self) -> str:
        return reverse("media", args=[self.poster]) if self.poster else ""

    @property
    def strip_url(self) -> str:
        return reverse("media", args=[self.strip]) if self.strip else ""

    @property
    def waveform_url(self) -> str:
        return reverse("media", args=[self.waveform]) if self.waveform else ""


class GoldChoice(models.TextChoices):
    """The known-right response: a pair's side, or an N-slot item's best
    slot (3..8 only for items with that many responses: a published ranking
    imported as gold, annotate.importing.formats.ranked)."""

    NONE = "", "None"
    RESPONSE_1 = "1", "Response 1"
    RESPONSE_2 = "2", "Response 2"
    RESPONSE_3 = "3", "Response 3"
    RESPONSE_4 = "4", "Response 4"
    RESPONSE_5 = "5", "Response 5"
    RESPONSE_6 = "6", "Response 6"
    RESPONSE_7 = "7", "Response 7"
    RESPONSE_8 = "8", "Response 8"


def shuffle_key(seed: int, external_id: str, group: str = "") -> int:
    """A stable pseudo-random 63-bit key from the project seed and the item
    ID; for an item of a group (Item.group_key), from the group key instead,
    so the group's items sit side by side in the claim order (the id orders
    them within it)."""
    source = f"group\x00{group}" if group else external_id
    digest = hashlib.sha256(f"{seed}:{source}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


# The columns an item's votes are counted in: a pair's choice (1, 2, tie) or
# an N-slot vote (a best-of-N pick or a ranking). Each current judgement is
# in exactly one of them.
VOTE_TALLIES = ("votes_1", "votes_2", "votes_tie", "votes_ranked")


def item_votes(path: str = "") -> models.Expression:
    """An item's current votes (Item.n_votes) as an expression; `path` is
    the lookup to the item from the queried model ("item__", "assignment__item__")."""
    first, *rest = (F(f"{path}{column}") for column in VOTE_TALLIES)
    total = first
    for column in rest:
        total = total + column
    return total


class ItemPurpose(models.TextChoices):
    """What an item is for (issue 36). Only benchmark items count in
    statistics, verdicts, releases, progress and exports; qualification and
    check items carry gold and measure the annotator instead."""

    BENCHMARK = "benchmark", "Benchmark"
    QUALIFICATION = "qualification", "Qualification"
    CHECK = "check", "Gold check"


class ItemQuerySet(models.QuerySet["Item"]):
    def benchmark(self) -> ItemQuerySet:
        """The items that count in the benchmark (not qualification/checks)."""
        return self.filter(purpose=ItemPurpose.BENCHMARK)

    def live_gates(self, purpose: str) -> ItemQuerySet:
        """The qualification or check items (`purpose`) still in use: not
        retired by a curator (curation.gold)."""
        return self.filter(purpose=purpose, retired_at__isnull=True)

    def needing_votes(self) -> ItemQuerySet:
        """Items with fewer live assignments than they need."""
        return self.filter(live_assignments__lt=F("votes_needed"))


class Item(models.Model):
    # No index of its own: every composite index below starts with project_id,
    # and each index is written again by every claim and vote (non-HOT updates).
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="items", db_index=False
    )
    domain = models.ForeignKey(Domain, on_delete=models.PROTECT, related_name="items")
    external_id = models.CharField(max_length=200)
    # The content is the item's parts (annotate.models.parts). These five
    # columns are derived from them by annotate.models.parts.derived_columns
    # alone (search, the admin's list, curation lists, exports of the MRB
    # record): never write them anywhere else.
    prompt = models.TextField(editable=False)
    # The prompt's one image of an item of the Multimodal RewardBench shape;
    # null for any other item, whose images are in its parts only.
    image = models.ForeignKey(
        ImageAsset,
        on_delete=models.PROTECT,
        related_name="items",
        null=True,
        blank=True,
        editable=False,
    )
    image_path = models.CharField(
        max_length=500,
        blank=True,
        editable=False,
        help_text="The image's path in the source dataset, kept for export.",
    )
    response_1 = models.TextField(editable=False)
    response_2 = models.TextField(editable=False)
    model_1 = models.CharField(max_length=200, blank=True)
    model_2 = models.CharField(max_length=200, blank=True)
    gold_choice = models.CharField(
        max_length=1, choices=GoldChoice.choices, blank=True, default=GoldChoice.NONE
    )
    reference_answer = models.TextField(blank=True)
    # Items that share a group key are one prompt's pairs (MM-RLHF-RewardBench's
    # prompt id) or one pair under several criteria (Omni-RewardBench): Acc+
    # counts a group right only when all its items are, and the compare page
    # serves a group's items one after another. "" = an item of its own.
    group_key = models.CharField(max_length=200, blank=True, default="")
    # The question the annotator answers about this item (free text shown
    # above the responses); "" = the project's instructions alone.
    criterion = models.TextField(blank=True, default="")
    meta = models.JSONField(default=dict, blank=True, help_text="Source fields, verbatim.")
    # Issue 36: benchmark (default) | qualification | check. Non-benchmark
    # items carry gold and never count in the benchmark's figures.
    purpose = models.CharField(
        max_length=13, choices=ItemPurpose.choices, default=ItemPurpose.BENCHMARK
    )
    # A check item whose answer is made obvious (an attention check).
    is_attention = models.BooleanField(default=False)
    # Shown to a qualifying annotator after they answered (never before).
    explanation = models.TextField(blank=True, default="")
    # A qualification or check item a curator made from a benchmark item
    # with a settled verdict (curation.gold): the item it copies. The source
    # keeps its votes, verdict and release membership; the copy has the same
    # parts and the verdict's side as gold. Annotators who voted on the
    # source are never served its copy as a check (annotate.checks).
    copied_from = models.ForeignKey(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="copies",
        db_index=False,
    )
    # A qualification or check item a curator retired: never served again,
    # and its answers no longer count in check accuracy. Kept, with its votes.
    retired_at = models.DateTimeField(null=True, blank=True)
    content_hash = models.CharField(
        max_length=64, help_text="SHA-256 of the imported content; makes re-import a no-op."
    )
    # Position in the project's seeded shuffle (see shuffle_key()); claim order
    # among items equally close to completion.
    shuffle_key = models.BigIntegerField(default=0)
    # How many votes this item collects in all (base count plus escalations
    # and curators' requests); a curator's decision lowers it to the votes it
    # has (0 for an item closed before any vote), so nothing more is claimed.
    votes_needed = models.PositiveSmallIntegerField()
    # Assignments that count towards votes_needed: open (leased) or submitted.
    live_assignments = models.PositiveSmallIntegerField(default=0)
    # Tallies of current judgements in canonical terms; updated with each vote.
    votes_1 = models.PositiveSmallIntegerField(default=0)
    votes_2 = models.PositiveSmallIntegerField(default=0)
    votes_tie = models.PositiveSmallIntegerField(default=0)
    # Current best-of-N picks and rankings (N-slot votes, whose answer is on
    # their slot rows), counted in the same UPDATE as a pair's choice: an
    # item's votes are VOTE_TALLIES summed (Item.n_votes, item_votes()), for
    # both shapes, so progress, collecting() and the verdict's "enough
    # votes" read one count. Always 0 in a pairwise project.
    votes_ranked = models.PositiveSmallIntegerField(default=0)
    # Tallies of the current judgements' correctness labels per response,
    # updated in the vote's own UPDATE, so the agreement dashboard reads label
    # counts from items instead of grouping every judgement. Plain integers:
    # the named CHECK below is the one that guards them.
    correct_1_yes = models.SmallIntegerField(default=0)
    correct_1_no = models.SmallIntegerField(default=0)
    correct_1_unsure = models.SmallIntegerField(default=0)
    correct_2_yes = models.SmallIntegerField(default=0)
    correct_2_no = models.SmallIntegerField(default=0)
    correct_2_unsure = models.SmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ItemQuerySet.as_manager()

    class Meta:
        ordering = ["project", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"], name="annotate_item_external_id_per_project"
            ),
            models.CheckConstraint(
                condition=Q(gold_choice__in=GoldChoice.values), name="annotate_item_gold_valid"
            ),
            # Qualification and check items are judged against gold: they need it.
            models.CheckConstraint(
                condition=Q(purpose=ItemPurpose.BENCHMARK) | ~Q(gold_choice=GoldChoice.NONE),
                name="annotate_item_gate_has_gold",
            ),
            models.CheckConstraint(
                condition=Q(purpose__in=ItemPurpose.values), name="annotate_item_purpose_valid"
            ),
            # Qualification and check items collect no votes for the benchmark:
            # never in the claim's pool or the progress counters (whose
            # triggers sum votes_needed and min(votes, votes_needed)); a
            # check's lease does not count in live_assignments (issue 36).
            models.CheckConstraint(
                condition=Q(purpose=ItemPurpose.BENCHMARK) | Q(votes_needed=0),
                name="annotate_item_gate_needs_no_votes",
            ),
            # The overlap guarantee: never more live assignments than needed.
            models.CheckConstraint(
                condition=Q(live_assignments__lte=F("votes_needed")),
                name="annotate_item_live_within_needed",
            ),
            # A label tally below zero means a revision took back a label that
            # was never counted: fail the vote rather than let the counts drift.
            models.CheckConstraint(
                condition=Q(
                    correct_1_yes__gte=0,
                    correct_1_no__gte=0,
                    correct_1_unsure__gte=0,
                    correct_2_yes__gte=0,
                    correct_2_no__gte=0,
                    correct_2_unsure__gte=0,
                ),
                name="annotate_item_label_tallies_nonnegative",
            ),
        ]
        indexes = [
            # claim_next_item: items of one project that still need votes,
            # fewest missing votes first, then the seeded shuffle, then the id
            # (the claim's whole ORDER BY, so its LIMIT 1 stops at the first
            # item it may take instead of sorting a batch of equal keys).
            models.Index(
                F("project"),
                F("votes_needed") - F("live_assignments"),
                F("shuffle_key"),
                F("id"),
                name="annotate_item_claim_order_idx",
                condition=Q(live_assignments__lt=F("votes_needed")),
            ),
            # curation.agreement.reports.tally_patterns (the agreement dashboard's point
            # estimates): items grouped by domain and tallies, read from this
            # small index alone (index-only scan, already in group order)
            # instead of the wide item rows. Its (project, domain) prefix also
            # serves per-domain listings and counts (dashboards, exports).
            models.Index(
                fields=[
                    "project",
                    "domain",
                    "votes_1",
                    "votes_2",
                    "votes_tie",
                    "correct_1_yes",
                    "correct_1_no",
                    "correct_1_unsure",
                    "correct_2_yes",
                    "correct_2_no",
                    "correct_2_unsure",
                ],
                name="annotate_item_tally_idx",
            ),
            # curation.gold: a source item's copies (its adjudication page, the
            # one-live-copy rule, the check claim's "voted on the source"
            # test) and SET_NULL when a source is deleted. Copies are few.
            models.Index(
                fields=["copied_from"],
                name="annotate_item_copied_from_idx",
                condition=Q(copied_from__isnull=False),
            ),
            # A group's items (Acc+, the compare page's next pair of a group).
            models.Index(
                fields=["project", "group_key"],
                name="annotate_item_group_idx",
                condition=~Q(group_key=""),
            ),
        ]

    def __str__(self) -> str:
        return self.external_id

    @property
    def n_votes(self) -> int:
        return self.votes_1 + self.votes_2 + self.votes_tie + self.votes_ranked
