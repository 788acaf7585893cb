"""Curators' reading and deciding (README step 8): verdicts, one item with
every vote, decisions, and the data grid of every item."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from triplet_client.models import BulkResult, ItemRow, Project, Verdict, from_json
from triplet_client.transport import Resource, segment, slug_of


def _yes_no(value: bool | None) -> str | None:
    return None if value is None else ("yes" if value else "no")


class CurationApi(Resource):
    def verdicts(
        self,
        project: str | Project,
        *,
        status: str = "all",
        domain: str | None = None,
        kind: str | None = None,
        q: str | None = None,
    ) -> Iterator[Verdict]:
        """Verdicts, oldest change first. `status`: all, needs_votes, agreed,
        contested, resolved, excluded or stuck (waiting on votes nobody
        eligible can give)."""
        params = {"status": status, "domain": domain, "kind": kind, "q": q}
        for row in self._t.pages(f"projects/{slug_of(project)}/verdicts/", params):
            yield Verdict.from_api(row)

    def verdict(self, project: str | Project, item_id: int) -> Verdict:
        """One item with its content, model names, gold and current votes."""
        path = f"projects/{slug_of(project)}/verdicts/{segment(item_id)}/"
        return Verdict.from_api(self._t.json("GET", path))

    def decide(
        self,
        project: str | Project,
        verdict: Verdict,
        action: str,
        reason: str,
        *,
        choice: str | None = None,
        category: str | None = None,
        n: int | None = None,
    ) -> Verdict:
        """resolve (choice 1, 2 or tie), exclude (category), more_votes (n)
        or reopen an item, deciding on the verdict's version (Conflict
        `stale` when it changed since)."""
        body: dict[str, Any] = {"action": action, "reason": reason, "version": verdict.version}
        body.update(
            {k: v for k, v in {"choice": choice, "category": category, "n": n}.items() if v}
        )
        path = f"projects/{slug_of(project)}/verdicts/{segment(verdict.item_id)}/decision/"
        return Verdict.from_api(self._t.json("POST", path, json=body))

    def items(
        self,
        project: str | Project,
        *,
        status: str | None = None,
        domain: str | None = None,
        kind: str | None = None,
        votes_min: int | None = None,
        votes_max: int | None = None,
        agreement_min: float | None = None,
        agreement_max: float | None = None,
        flagged: bool | None = None,
        gold: bool | None = None,
        group: str | None = None,
        q: str | None = None,
        sort: str | None = None,
    ) -> Iterator[ItemRow]:
        """Every item of the project as the data grid shows it, with its
        filters: status, domain, kind (why contested), votes and winner
        share (agreement) ranges, flagged problem, has gold, `group` (one
        group's items by its exact key), text `q`, and
        `sort` (id, external_id, votes, agreement, updated, status; `-` for
        descending)."""
        params = {
            "status": status,
            "domain": domain,
            "kind": kind,
            "votes_min": votes_min,
            "votes_max": votes_max,
            "agreement_min": agreement_min,
            "agreement_max": agreement_max,
            "flagged": _yes_no(flagged),
            "gold": _yes_no(gold),
            "group": group,
            "q": q,
            "sort": sort,
        }
        for row in self._t.pages(f"projects/{slug_of(project)}/items/", params):
            yield ItemRow.from_api(row)

    def bulk_items(
        self,
        project: str | Project,
        action: str,
        item_ids: Sequence[int],
        reason: str,
        *,
        category: str | None = None,
        n: int | None = None,
        domain: str | None = None,
    ) -> BulkResult:
        """exclude (`category`), reopen, more_votes (`n`) or move_domain
        (`domain`) many items at once, one audit entry each; items the
        action does not apply to are counted in `skipped` by reason."""
        body: dict[str, Any] = {"action": action, "item_ids": list(item_ids), "reason": reason}
        given = {"category": category, "n": n, "domain": domain}
        body.update({k: v for k, v in given.items() if v is not None})
        answer = self._t.json("POST", f"projects/{slug_of(project)}/items/bulk/", json=body)
        return from_json(BulkResult, answer)
