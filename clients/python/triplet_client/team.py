"""Members and invitations (README steps 4 to 6)."""

from __future__ import annotations

from collections.abc import Iterator

from triplet_client.models import Invitation, Member, Membership, Project, from_json
from triplet_client.transport import Resource, segment, slug_of


class TeamApi(Resource):
    def members(self, project: str | Project) -> Iterator[Member]:
        """The team with judged count, last activity and agreement (admins)."""
        for row in self._t.pages(f"projects/{slug_of(project)}/members/"):
            yield from_json(Member, row)

    def add_member(self, project: str | Project, username: str, role: str = "annotator") -> Member:
        """Add an existing account: role annotator, curator or admin."""
        body = {"username": username, "role": role}
        answer = self._t.json("POST", f"projects/{slug_of(project)}/members/", json=body)
        return from_json(Member, answer)

    def update_member(
        self,
        project: str | Project,
        user_id: int,
        *,
        role: str | None = None,
        is_active: bool | None = None,
    ) -> Member:
        """Change a role; is_active=False deactivates (votes stay), True reactivates."""
        body = {k: v for k, v in {"role": role, "is_active": is_active}.items() if v is not None}
        path = f"projects/{slug_of(project)}/members/{segment(user_id)}/"
        return from_json(Member, self._t.json("PATCH", path, json=body))

    def remove_member(self, project: str | Project, user_id: int) -> None:
        """Remove someone who never voted (a voter is deactivated instead: Conflict)."""
        self._t.send("DELETE", f"projects/{slug_of(project)}/members/{segment(user_id)}/")

    def invitations(self, project: str | Project) -> Iterator[Invitation]:
        for row in self._t.pages(f"projects/{slug_of(project)}/invitations/"):
            yield from_json(Invitation, row)

    def invite(
        self,
        project: str | Project,
        role: str = "annotator",
        *,
        max_uses: int | None = 1,
        expires_in_days: int = 7,
        note: str = "",
    ) -> Invitation:
        """An invitation link (`url`, shown only now); max_uses=None: anyone
        with the link until it expires."""
        body = {
            "role": role,
            "max_uses": max_uses,
            "expires_in_days": expires_in_days,
            "note": note,
        }
        answer = self._t.json("POST", f"projects/{slug_of(project)}/invitations/", json=body)
        return from_json(Invitation, answer)

    def revoke_invitation(self, project: str | Project, invitation_id: int) -> None:
        path = f"projects/{slug_of(project)}/invitations/{segment(invitation_id)}/"
        self._t.send("DELETE", path)

    def accept_invitation(self, token_or_url: str) -> Membership:
        """Join with an invitation (its link or the link's last part)."""
        token = token_or_url.rstrip("/").rsplit("/", 1)[-1]
        answer = self._t.json("POST", "invitations/accept/", json={"token": token})
        return from_json(Membership, answer)
