"""The annotator gates (README "Qualification and checks"): your own
qualification, the curators' list of attempts and manual admission, and the
annotator table of check accuracy with reinstatement of a paused annotator,
and the check and qualification items curators make from settled items.
Qualification answers themselves are given on the pages."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from triplet_client.models import Project, from_json
from triplet_client.quality_models import (
    AnnotatorChecks,
    GoldItem,
    QualificationStatus,
    QualifiedAnnotator,
)
from triplet_client.transport import Resource, segment, slug_of


@dataclass(frozen=True)
class Qualifications:
    """Every annotator's admission and attempts (qualification_attempts())."""

    required: bool
    items: int  # qualification items in the project
    annotators: list[QualifiedAnnotator]


class GatesApi(Resource):
    def qualification(self, project: str | Project) -> QualificationStatus:
        """Your qualification here: required, admitted, attempts, when you may retry."""
        answer = self._t.json("GET", f"projects/{slug_of(project)}/qualification/")
        return QualificationStatus.from_api(answer)

    def qualification_attempts(self, project: str | Project) -> Qualifications:
        """Every annotator's admission and attempts (curators)."""
        answer = self._t.json("GET", f"projects/{slug_of(project)}/qualification/annotators/")
        annotators = [QualifiedAnnotator.from_api(a) for a in answer["annotators"]]
        return Qualifications(answer["required"], answer["items"], annotators)

    def admit(self, project: str | Project, user_id: int, reason: str = "") -> QualifiedAnnotator:
        """Admit an annotator without qualification (curators; audited)."""
        body = {"user_id": user_id, "reason": reason}
        path = f"projects/{slug_of(project)}/qualification/admit/"
        return QualifiedAnnotator.from_api(self._t.json("POST", path, json=body))

    def annotator_checks(self, project: str | Project) -> Iterator[AnnotatorChecks]:
        """The annotator table (curators): accuracy on check items with its
        95 % Wilson interval, and who the check rule paused."""
        for row in self._t.pages(f"projects/{slug_of(project)}/annotators/"):
            yield from_json(AnnotatorChecks, row)

    def reinstate(self, project: str | Project, user_id: int) -> AnnotatorChecks:
        """Reinstate an annotator the check rule paused (Conflict `not_paused` otherwise)."""
        path = f"projects/{slug_of(project)}/annotators/{segment(user_id)}/reinstate/"
        return from_json(AnnotatorChecks, self._t.json("POST", path))

    def gold_items(self, project: str | Project) -> Iterator[GoldItem]:
        """The project's check and qualification items, made or imported (curators)."""
        for row in self._t.pages(f"projects/{slug_of(project)}/gold-items/"):
            yield from_json(GoldItem, row)

    def make_gold_item(
        self,
        project: str | Project,
        item_id: int,
        purpose: str,
        reason: str,
        explanation: str = "",
        is_attention: bool = False,
    ) -> GoldItem:
        """A check (`purpose="check"`) or qualification item copied from a
        settled benchmark item, gold from its verdict (curators; audited).
        Conflict when the item is not settled, a tie, or already has a live copy."""
        body = {
            "item_id": item_id,
            "purpose": purpose,
            "reason": reason,
            "explanation": explanation,
            "is_attention": is_attention,
        }
        path = f"projects/{slug_of(project)}/gold-items/"
        return from_json(GoldItem, self._t.json("POST", path, json=body))

    def edit_gold_item(
        self, project: str | Project, item_id: int, explanation: str, reason: str = ""
    ) -> GoldItem:
        """Replace a check or qualification item's explanation (curators; audited)."""
        path = f"projects/{slug_of(project)}/gold-items/{segment(item_id)}/"
        body = {"explanation": explanation, "reason": reason}
        return from_json(GoldItem, self._t.json("PATCH", path, json=body))

    def retire_gold_item(self, project: str | Project, item_id: int, reason: str) -> GoldItem:
        """Retire a check or qualification item: never served again, its
        answers no longer count (curators; audited; one-way)."""
        path = f"projects/{slug_of(project)}/gold-items/{segment(item_id)}/retire/"
        return from_json(GoldItem, self._t.json("POST", path, json={"reason": reason}))
