"""Projects and their domains (README steps 1 and 2)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from triplet_client.models import Adaptive, Domain, Project, from_json
from triplet_client.transport import Resource, segment, slug_of

ProjectRef = str | Project


class ProjectsApi(Resource):
    def create_project(
        self, name: str, slug: str = "", *, preset: str = "mrb", **settings: Any
    ) -> Project:
        """Create a project (site admins and users allowed to create
        projects); you become its admin. `preset`: mrb (Multimodal
        RewardBench's six domains), vlrb (VL-RewardBench's three) or empty.
        `settings`: votes_per_item, escalation_votes, agree_share, allow_tie,
        preference_scale, require_rationale, lease_minutes, seed,
        guidelines, description, licence."""
        body = {"name": name, "slug": slug, "preset": preset, **settings}
        return from_json(Project, self._t.json("POST", "projects/", json=body), role="admin")

    def project(self, project: ProjectRef) -> Project:
        return from_json(Project, self._t.json("GET", f"projects/{slug_of(project)}/"))

    def projects(self) -> Iterator[Project]:
        """Projects you are a member of, with your role."""
        for row in self._t.pages("projects/"):
            yield from_json(Project, row)

    def update_project(self, project: ProjectRef, **changes: Any) -> Project:
        """Change settings (admins); `archived=True` archives, False reopens."""
        answer = self._t.json("PATCH", f"projects/{slug_of(project)}/", json=changes)
        return from_json(Project, answer)

    def domains(self, project: ProjectRef) -> list[Domain]:
        return [
            from_json(Domain, d) for d in self._t.pages(f"projects/{slug_of(project)}/domains/")
        ]

    def add_domain(
        self,
        project: ProjectRef,
        slug: str,
        title: str,
        export_category: str,
        kind: str = "preference",
        **options: Any,
    ) -> Domain:
        """Add a domain (admins). `kind`: correctness or preference;
        `options`: guidelines, correctness_question, yes_label, no_label,
        asks_grade, grade_question."""
        body = {"slug": slug, "title": title, "export_category": export_category, "kind": kind}
        answer = self._t.json(
            "POST", f"projects/{slug_of(project)}/domains/", json={**body, **options}
        )
        return from_json(Domain, answer)

    def update_domain(self, project: ProjectRef, domain: str, **changes: Any) -> Domain:
        path = f"projects/{slug_of(project)}/domains/{segment(domain)}/"
        return from_json(Domain, self._t.json("PATCH", path, json=changes))

    def adaptive(self, project: ProjectRef) -> Adaptive:
        """The vote mode and adaptive rule, with the last refit's item counts (curators)."""
        return from_json(Adaptive, self._t.json("GET", f"projects/{slug_of(project)}/adaptive/"))

    def set_vote_mode(
        self,
        project: ProjectRef,
        vote_mode: str,
        *,
        base_votes: int | None = None,
        budget: int | None = None,
        stop_certainty: float | None = None,
    ) -> Adaptive:
        """fixed, or adaptive: `base_votes` for every item, then more where
        the label is uncertain, up to `budget`, until `stop_certainty`
        (admins; omitted values take the rule's defaults)."""
        given = {"base_votes": base_votes, "budget": budget, "stop_certainty": stop_certainty}
        body = {"vote_mode": vote_mode, **{k: v for k, v in given.items() if v is not None}}
        answer = self._t.json("PUT", f"projects/{slug_of(project)}/adaptive/", json=body)
        return from_json(Adaptive, answer)
