"""The grid's filters and sorts, written once for the page and the API.

Rows are verdicts (one per item, denormalised with the project) joined to
their item and domain: every column the grid shows is on those three rows,
so a page is one query for the rows and one for the count, whatever the
project's size. Thumbnails and problem flags of the page's rows are read in
one query each (`page_extras`).
"""

from __future__ import annotations

from dataclasses import dataclass

from django import forms
from django.db.models import F, FloatField, Q, QuerySet, Value
from django.db.models.functions import Cast, Greatest

from annotate.models import GoldChoice, ItemPart, Judgement, PartKind, Project
from curation.models import ContestKind, Verdict, VerdictStatus

# Page sizes a person may pick (the API takes any size up to its maximum).
PAGE_SIZES = (25, 50, 100, 200)
DEFAULT_PAGE_SIZE = 50

# Sort key -> ORDER BY. Every order ends with the primary key, so pages are
# stable while the data does not change.
SORTS = {
    "id": ("item_id",),
    "-id": ("-item_id",),
    "external_id": ("item__external_id", "item_id"),
    "-external_id": ("-item__external_id", "-item_id"),
    "votes": ("n_votes", "item_id"),
    "-votes": ("-n_votes", "-item_id"),
    "agreement": ("winner_share", "item_id"),
    "-agreement": ("-winner_share", "-item_id"),
    "updated": ("updated_at", "item_id"),
    "-updated": ("-updated_at", "-item_id"),
    "status": ("status", "item_id"),
}
SORT_LABELS = {
    "id": "Import order",
    "-id": "Import order, newest first",
    "external_id": "ID",
    "-external_id": "ID, descending",
    "votes": "Fewest votes",
    "-votes": "Most votes",
    "agreement": "Least agreement",
    "-agreement": "Most agreement",
    "updated": "Oldest change",
    "-updated": "Newest change",
    "status": "Status",
}

YES_NO = [("", "Any"), ("yes", "Yes"), ("no", "No")]


class GridFilterForm(forms.Form):
    """The grid's query string. Every field is optional; an invalid value is
    an error shown beside its field (a 400 in the API), never ignored."""

    status = forms.ChoiceField(required=False, choices=[("", "Any status"), *VerdictStatus.choices])
    domain = forms.ChoiceField(required=False)
    kind = forms.ChoiceField(
        required=False,
        label="Why contested",
        choices=[("", "Any reason"), *[c for c in ContestKind.choices if c[0]]],
    )
    votes_min = forms.IntegerField(required=False, min_value=0, max_value=1000, label="Votes ≥")
    votes_max = forms.IntegerField(required=False, min_value=0, max_value=1000, label="Votes ≤")
    agreement_min = forms.FloatField(
        required=False,
        min_value=0,
        max_value=1,
        label="Winner share ≥",
        help_text="Share of the votes that went to the most voted answer (0 to 1).",
    )
    agreement_max = forms.FloatField(
        required=False, min_value=0, max_value=1, label="Winner share ≤"
    )
    flagged = forms.ChoiceField(required=False, choices=YES_NO, label="Problem flagged")
    gold = forms.ChoiceField(required=False, choices=YES_NO, label="Has gold")
    q = forms.CharField(required=False, max_length=200, label="Search", strip=True)
    sort = forms.ChoiceField(required=False, choices=list(SORT_LABELS.items()))
    page_size = forms.TypedChoiceField(
        required=False,
        coerce=int,
        empty_value=DEFAULT_PAGE_SIZE,
        initial=DEFAULT_PAGE_SIZE,
        choices=[(n, str(n)) for n in PAGE_SIZES],
        label="Rows",
    )

    def __init__(self, data=None, *args, project: Project, **kwargs):
        if data is not None and not data.get("page_size"):
            data = data.copy()  # (shown as chosen, not as the list's first size)
            data["page_size"] = str(DEFAULT_PAGE_SIZE)
        super().__init__(data, *args, **kwargs)
        self.fields["domain"].choices = [
            ("", "Any domain"),
            *project.domains.order_by("position").values_list("slug", "title"),
        ]

    def clean(self):
        data = super().clean()
        lo, hi = data.get("votes_min"), data.get("votes_max")
        if lo is not None and hi is not None and lo > hi:
            self.add_error("votes_max", "Must be at least the minimum.")
        lo, hi = data.get("agreement_min"), data.get("agreement_max")
        if lo is not None and hi is not None and lo > hi:
            self.add_error("agreement_max", "Must be at least the minimum.")
        return data


def _flagged_items(project: Project):
    """Items of the project with a current vote flagging a problem (a small
    set, read through annotate_judgement_flagged_idx)."""
    return Judgement.objects.filter(
        flagged_problem=True, is_current=True, assignment__item__project=project
    ).values("assignment__item_id")


# Sorts and filters that need the computed vote columns.
_COMPUTED = {"votes", "-votes", "agreement", "-agreement"}


def grid_rows(project: Project, f: dict) -> QuerySet[Verdict]:
    """The project's items as grid rows (Verdicts with item and domain),
    filtered and sorted by `f` (a GridFilterForm's cleaned_data, or the
    API's validated filters: the same keys).

    The count of a page (Paginator) runs this without select_related: a
    filter on the verdict alone (status, reason, flags) counts verdicts
    through their (project, status) index, without joining every item, and
    the vote columns are computed only when a filter or the sort needs
    them (the page shows them from the item's own tallies: `decorate`)."""
    rows = Verdict.objects.filter(project=project)
    if f.get("status"):
        rows = rows.filter(status=f["status"])
    if f.get("kind"):
        rows = rows.filter(contest_kind=f["kind"])
    if f.get("domain"):
        domain = project.domains.filter(slug=f["domain"]).values("pk")
        rows = rows.filter(item__domain_id__in=domain)
    computed = f.get("sort") in _COMPUTED or any(
        f.get(k) is not None for k in ("votes_min", "votes_max", "agreement_min", "agreement_max")
    )
    if computed:
        n_votes = F("item__votes_1") + F("item__votes_2") + F("item__votes_tie")
        rows = rows.annotate(
            n_votes=n_votes,
            # Share of the votes given to the most voted answer; 0 without votes.
            winner_share=Cast(
                Greatest("item__votes_1", "item__votes_2", "item__votes_tie"), FloatField()
            )
            / Greatest(Cast(n_votes, FloatField()), Value(1.0)),
        )
        if f.get("votes_min") is not None:
            rows = rows.filter(n_votes__gte=f["votes_min"])
        if f.get("votes_max") is not None:
            rows = rows.filter(n_votes__lte=f["votes_max"])
        if f.get("agreement_min") is not None:
            rows = rows.filter(winner_share__gte=f["agreement_min"])
        if f.get("agreement_max") is not None:
            rows = rows.filter(winner_share__lte=f["agreement_max"])
    if f.get("flagged") == "yes":
        rows = rows.filter(item_id__in=_flagged_items(project))
    elif f.get("flagged") == "no":
        rows = rows.exclude(item_id__in=_flagged_items(project))
    if f.get("gold") == "yes":
        rows = rows.exclude(item__gold_choice=GoldChoice.NONE)
    elif f.get("gold") == "no":
        rows = rows.filter(item__gold_choice=GoldChoice.NONE)
    if f.get("q"):
        q = f["q"]
        rows = rows.filter(Q(item__external_id__icontains=q) | Q(item__prompt__icontains=q))
    order = SORTS.get(f.get("sort") or "id", SORTS["id"])
    # Only the columns the grid shows: an item's responses and stored HTML
    # can be large, and 200 rows of them would be read for nothing.
    return (
        rows.select_related("item__domain")
        .only(
            "item_id",
            "project_id",
            "status",
            "final_choice",
            "provenance",
            "contest_kind",
            "exclusion_category",
            "updated_at",
            "version",
            "item__id",
            "item__external_id",
            "item__prompt",
            "item__gold_choice",
            "item__votes_1",
            "item__votes_2",
            "item__votes_tie",
            "item__votes_needed",
            "item__domain__slug",
            "item__domain__title",
        )
        .order_by(*order)
    )


def decorate(rows: list[Verdict]) -> None:
    """Set what one page's rows show beside their own columns: `thumb` (a
    media path or ""), `flagged`, `n_votes` and `winner_share`. At most two
    queries, whatever the page size."""
    extras = page_extras(rows)
    for v in rows:
        v.thumb = extras.thumbnails.get(v.item_id, "")
        v.flagged = v.item_id in extras.flagged
        item = v.item
        n = item.votes_1 + item.votes_2 + item.votes_tie
        v.n_votes = n
        v.winner_share = max(item.votes_1, item.votes_2, item.votes_tie) / n if n else 0.0


@dataclass(frozen=True)
class Extras:
    thumbnails: dict[int, str]  # item id -> media path of a thumbnail
    flagged: set[int]  # item ids with a current problem flag


def page_extras(rows: list[Verdict]) -> Extras:
    """Thumbnails (read from the items' parts) and the problem flags of one
    page's rows: two queries, whatever the page size."""
    ids = [v.item_id for v in rows]
    thumbnails: dict[int, str] = {}
    if ids:
        # The first picture of the item: the prompt's, else the first response's.
        parts = (
            ItemPart.objects.filter(item_id__in=ids, kind=PartKind.IMAGE)
            .order_by("item_id", "slot", "position")
            .values_list("item_id", "image__thumbnail", "image__file")
        )
        for item_id, thumb, file in parts:
            thumbnails.setdefault(item_id, thumb or file)
    flagged = set(
        Judgement.objects.filter(
            assignment__item_id__in=ids, is_current=True, flagged_problem=True
        ).values_list("assignment__item_id", flat=True)
    )
    return Extras(thumbnails=thumbnails, flagged=flagged)
