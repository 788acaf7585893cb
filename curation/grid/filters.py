"""The grid's filters and sorts, written once for the page and the API.

Rows are verdicts (one per item, denormalised with the project) joined to
their item and domain: every column the grid shows is on those three rows,
so a page is one query for the rows and one for the count, whatever the
project's size (`GridRows`: the rows' query finds the page's item ids from
indexes first). Thumbnails and problem flags of the page's rows are read in
one query each (`page_extras`).
"""

from __future__ import annotations

from dataclasses import dataclass

from django import forms
from django.db import connection
from django.db.models import (
    F,
    FloatField,
    Lookup,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
)
from django.db.models.functions import Cast, Greatest

from annotate.models import (
    Assignment,
    GoldChoice,
    Item,
    ItemPart,
    Judgement,
    PartKind,
    Project,
    item_votes,
)
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
    group = forms.CharField(
        required=False,
        max_length=200,
        label="Group",
        strip=True,
        help_text="The items of one group (a prompt's pairs, a pair's criteria): its exact key.",
    )
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
        domains = list(project.domains.order_by("position").values_list("slug", "title", "pk"))
        self.fields["domain"].choices = [("", "Any domain"), *((s, t) for s, t, _ in domains)]
        self.domain_ids = {slug: pk for slug, _, pk in domains}

    def clean(self):
        data = super().clean()
        lo, hi = data.get("votes_min"), data.get("votes_max")
        if lo is not None and hi is not None and lo > hi:
            self.add_error("votes_max", "Must be at least the minimum.")
        lo, hi = data.get("agreement_min"), data.get("agreement_max")
        if lo is not None and hi is not None and lo > hi:
            self.add_error("agreement_max", "Must be at least the minimum.")
        if data.get("domain"):
            data["domain_id"] = self.domain_ids[data["domain"]]  # (see matching)
        return data


def _flagged_items():
    """Items with a current vote flagging a problem (a small set, read
    through annotate_judgement_flagged_idx). Each flag's item comes from its
    assignment by primary key, a scalar subquery per flag: joined instead,
    PostgreSQL hashes every assignment of every project to find the ~2,000
    the flags point at (30-50 ms at 300,000 votes). Not limited to the
    project: the grid's own project filter does that."""
    item_of = Assignment.objects.filter(pk=OuterRef("assignment_id")).values("item_id")[:1]
    return Judgement.objects.filter(flagged_problem=True, is_current=True).values(
        item=Subquery(item_of)
    )


def among(rows: QuerySet[Verdict], items: QuerySet, *, any_array: bool) -> QuerySet[Verdict]:
    """`rows` of the items `items` (a query of item ids) selects: a small set
    found by its own index (problem flags, a text search). `any_array`
    (PostgreSQL): as item_id = ANY(ARRAY(items)), which PostgreSQL reads once
    and then probes the verdicts' (project, item) index for each; as
    IN (items), the plain form SQLite gets, PostgreSQL hashes every verdict
    of the project first (flags at 100,000 items: 160-250 ms against 30-65 ms
    on the loaded bench machine), or walks the items in id order testing the
    search on each until a page is full (a phrase in 250 prompts: 470 ms
    against 2 ms). The two forms must select the same rows
    (tests/curation/grid/test_grid_equality.py)."""
    if not any_array:
        return rows.filter(item_id__in=items)
    from django.contrib.postgres.expressions import ArraySubquery

    return rows.filter(_EqualsAny(F("item_id"), ArraySubquery(items)))


def searched_items(project: Project, q: str) -> QuerySet[Item]:
    """Items of the project whose ID or prompt contains `q` (any case):
    on PostgreSQL through the trigram indexes of annotate's migration 0016."""
    return Item.objects.filter(
        Q(external_id__icontains=q) | Q(prompt__icontains=q), project=project
    ).values("pk")


class _EqualsAny(Lookup):
    """lhs = ANY(rhs), rhs an array (PostgreSQL)."""

    lookup_name = "equals_any"

    def as_sql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        return f"{lhs} = ANY({rhs})", [*lhs_params, *rhs_params]


# Sorts and filters that need the computed vote columns.
_COMPUTED = {"votes", "-votes", "agreement", "-agreement"}
# Filters and sorts on the item's own columns (the others are the verdict's).
_ON_ITEM = (
    "domain",
    "votes_min",
    "votes_max",
    "agreement_min",
    "agreement_max",
    "gold",
    "group",
)
_SORTS_ON_ITEM = {"external_id", "-external_id", *_COMPUTED}


def _vote_columns() -> dict:
    pair_votes = F("item__votes_1") + F("item__votes_2") + F("item__votes_tie")
    return {
        # Every current vote: a pair's or an N-slot one (votes_ranked).
        "n_votes": item_votes("item__"),
        # Share of a pair's votes given to the most voted answer; 0 without
        # pair votes (a best-of-N or ranking item has none: its agreement is
        # its verdict's, curation.verdicts.ranked).
        "winner_share": Cast(
            Greatest("item__votes_1", "item__votes_2", "item__votes_tie"), FloatField()
        )
        / Greatest(Cast(pair_votes, FloatField()), Value(1.0)),
    }


def order_of(f: dict) -> tuple[str, ...]:
    return SORTS.get(f.get("sort") or "id", SORTS["id"])


def matching(project: Project, f: dict) -> QuerySet[Verdict]:
    """The verdicts of the project's items that `f` selects (a
    GridFilterForm's cleaned_data, or the API's validated filters: the same
    keys), in the grid's order, selecting nothing else: what a page's count,
    a page's keys and a bulk action on every matching item read.

    Verdict-only filters (status, reason, flags) count verdicts through
    their (project, status, item) index without touching an item. A filter
    or sort on the item's columns also names the item's project, so that
    PostgreSQL reads the items from annotate_item_grid_idx (project,
    domain, id with the tallies and gold: curation's migration 0019) by an
    index-only scan and merges or hashes it with the verdicts' index,
    instead of visiting every matching item's row."""
    any_array = connection.vendor == "postgresql"  # (see among)
    rows = Verdict.objects.filter(project=project)
    if f.get("status"):
        rows = rows.filter(status=f["status"])
    if f.get("kind"):
        rows = rows.filter(contest_kind=f["kind"])
    if any(f.get(k) not in (None, "") for k in _ON_ITEM) or f.get("sort") in _SORTS_ON_ITEM:
        rows = rows.filter(item__project=project)
    if f.get("domain"):
        # The domain's key as a constant when the form has it (the planner
        # then knows how many items the domain holds), else a subquery.
        domain = f.get("domain_id") or Subquery(
            project.domains.filter(slug=f["domain"]).values("pk")[:1]
        )
        rows = rows.filter(item__domain_id=domain)
    computed = f.get("sort") in _COMPUTED or any(
        f.get(k) is not None for k in ("votes_min", "votes_max", "agreement_min", "agreement_max")
    )
    if computed:
        # alias, not annotate: a page's keys select the item id alone.
        rows = rows.alias(**_vote_columns())
        if f.get("votes_min") is not None:
            rows = rows.filter(n_votes__gte=f["votes_min"])
        if f.get("votes_max") is not None:
            rows = rows.filter(n_votes__lte=f["votes_max"])
        if f.get("agreement_min") is not None:
            rows = rows.filter(winner_share__gte=f["agreement_min"])
        if f.get("agreement_max") is not None:
            rows = rows.filter(winner_share__lte=f["agreement_max"])
    if f.get("flagged") == "yes":
        rows = among(rows, _flagged_items(), any_array=any_array)
    elif f.get("flagged") == "no":
        rows = rows.exclude(item_id__in=_flagged_items())
    if f.get("gold") == "yes":
        rows = rows.exclude(item__gold_choice=GoldChoice.NONE)
    elif f.get("gold") == "no":
        rows = rows.filter(item__gold_choice=GoldChoice.NONE)
    if f.get("group"):
        # (annotate_item_group_idx: the project's items of one group.)
        rows = rows.filter(item__group_key=f["group"])
    if f.get("q"):
        rows = among(rows, searched_items(project, f["q"]), any_array=any_array)
    return rows.order_by(*order_of(f))


def with_columns(rows: QuerySet[Verdict], order: tuple[str, ...]) -> QuerySet[Verdict]:
    """`rows` with the item and domain a grid row shows, in `order` (its
    thumbnail comes from the items' parts: page_extras).
    Only the columns the grid shows: an item's responses and stored HTML can
    be large, and 200 rows of them would be read for nothing."""
    if any(o.lstrip("-") in ("n_votes", "winner_share") for o in order):
        rows = rows.alias(**_vote_columns())
    return rows.select_related("item__domain").only(*_ROW_COLUMNS).order_by(*order)


_ROW_COLUMNS = (
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
    "item__group_key",
    "item__criterion",
    "item__votes_1",
    "item__votes_2",
    "item__votes_tie",
    "item__votes_ranked",
    "item__votes_needed",
    "item__domain__slug",
    "item__domain__title",
)


def grid_rows(project: Project, f: dict) -> QuerySet[Verdict]:
    """Every row `f` selects, with the columns the grid shows, in order: one
    statement (for a few rows, or tests; a page reads GridRows)."""
    return with_columns(matching(project, f), order_of(f))


class GridRows:
    """The rows `f` selects as Paginator pages them: count() counts the
    matching verdicts (one statement that never reads an item's row), and
    a slice is one page in one statement that finds the page's item ids
    first, from indexes alone, then reads those rows' columns: sorted by
    agreement, PostgreSQL otherwise reads every matching item's row (or the
    whole table) to sort them and keep 50."""

    def __init__(self, project: Project, f: dict):
        self.keys = matching(project, f)
        self.order = order_of(f)

    def count(self) -> int:
        return self.keys.count()

    def __getitem__(self, page: slice) -> list[Verdict]:
        if not isinstance(page, slice):
            raise TypeError("GridRows is read a page (a slice) at a time.")
        ids = self.keys.values("item_id")[page]
        return list(with_columns(Verdict.objects.filter(item_id__in=ids), self.order))


def decorate(rows: list[Verdict]) -> None:
    """Set what one page's rows show beside their own columns: `thumb` (a
    media path or ""), `flagged`, `n_votes` and `winner_share`. At most two
    queries, whatever the page size."""
    extras = page_extras(rows)
    for v in rows:
        v.thumb = extras.thumbnails.get(v.item_id, "")
        v.flagged = v.item_id in extras.flagged
        item = v.item
        n = item.votes_1 + item.votes_2 + item.votes_tie  # a pair's votes
        v.n_votes = item.n_votes
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
