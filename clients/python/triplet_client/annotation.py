"""The annotator's loop (README step 7): claim, judge in displayed terms, skip."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from triplet_client.errors import StudioError
from triplet_client.models import Assignment, Claim, Judged, Part, Project, from_json
from triplet_client.transport import ByteProgress, Resource, id_of, slug_of


class AnnotationApi(Resource):
    def claim_next(self, project: str | Project) -> Claim:
        """Lease the next item (or get back the one you hold)."""
        response = self._t.send("POST", f"projects/{slug_of(project)}/assignments/next/")
        if response.status_code == 204:
            return Claim(None, done=True)
        if response.status_code == 202:
            return Claim(None, retry_after=float(response.headers.get("Retry-After", "15")))
        return Claim(from_json(Assignment, response.json()))

    def assignments(self, project: str | Project, *, wait: bool = True) -> Iterator[Assignment]:
        """Items to judge, one at a time, until none is left for you: judge
        or skip each before asking for the next. When nothing is free now
        but more may come, waits as the server says (wait=False stops)."""
        last = None
        while True:
            claim = self.claim_next(project)
            if claim.assignment is None:
                if claim.done or not wait:
                    return
                time.sleep(claim.retry_after or 15)
                continue
            if claim.assignment.id == last:
                raise StudioError(
                    f"Assignment {last} was neither judged nor skipped; judge() or skip() "
                    "each assignment before asking for the next."
                )
            last = claim.assignment.id
            yield claim.assignment

    def assignment(self, assignment: int | Assignment) -> Assignment:
        return from_json(Assignment, self._t.json("GET", f"assignments/{id_of(assignment)}/"))

    def judge(
        self,
        assignment: int | Assignment,
        choice: str = "",
        *,
        strength: int | None = None,
        correct_left: str = "",
        correct_right: str = "",
        grade_left: str = "",
        grade_right: str = "",
        confidence: int | None = None,
        rationale: str = "",
        active_seconds: float | None = None,
        flagged_problem: bool = False,
        problem_reason: str = "",
        pick: str | None = None,
        ranking: Sequence[int] | None = None,
        correct: Sequence[str] | None = None,
        grades: Sequence[str] | None = None,
        next: bool = False,
    ) -> Judged:
        """Vote in displayed terms: `choice` left, right or tie (A/B
        projects) or `strength` (graded: oriented to the left response);
        correctness domains also take correct_left/correct_right (yes/no).
        Items of more responses (`Assignment.task`): `pick` the best one's
        displayed name (A, B, …) or "none" (best_of_n); `ranking` a rank per
        response in displayed order, 1 best, ties sharing a rank ([1, 2, 2, 4]);
        `correct` (yes/no) and `grades` (A/B/C) per response in displayed
        order where the domain asks. Idempotent per assignment. next=True
        also claims your next item (`Judged.next`)."""
        body: dict[str, Any] = {
            "choice": choice,
            "strength": strength,
            "correct_left": correct_left,
            "correct_right": correct_right,
            "grade_left": grade_left,
            "grade_right": grade_right,
            "confidence": confidence,
            "rationale": rationale,
            "active_seconds": active_seconds,
            "flagged_problem": flagged_problem,
            "problem_reason": problem_reason,
            "pick": pick,
            "ranking": None if ranking is None else list(ranking),
            "correct": None if correct is None else list(correct),
            "grades": None if grades is None else list(grades),
        }
        # Unset fields stay out: the server's defaults ("" is refused where a
        # field does not apply, e.g. `choice` on a ranking).
        body = {k: v for k, v in body.items() if v is not None and v != ""}
        params = {"next": "true"} if next else None
        path = f"assignments/{id_of(assignment)}/judgement/"
        answer = self._t.json("POST", path, json=body, params=params)
        following = answer.get("next")
        following = from_json(Assignment, following) if following else None
        return from_json(Judged, answer, next=following)

    def skip(self, assignment: int | Assignment, reason: str) -> None:
        """Give an item back; it is never offered to you again."""
        path = f"assignments/{id_of(assignment)}/skip/"
        self._t.json("POST", path, json={"reason": reason})

    def download_media(
        self,
        media: str | Part,
        target: str | Path | None = None,
        *,
        derivative: str | None = None,
        on_progress: ByteProgress | None = None,
    ) -> bytes | Path:
        """A part's file (image, video, audio) as bytes, or streamed to the
        file `target` (returned). `derivative`: poster or strip (a video),
        waveform (an audio part): StudioError while the server has not made
        it yet (its URL is None). `media`: a Part or a URL from one."""
        if isinstance(media, Part):
            url = getattr(media, f"{derivative}_url", None) if derivative else media.url
            if not url:
                what = f"{derivative} of this {media.kind} part" if derivative else "file"
                raise StudioError(f"No {what} to download (not made yet, or none for its kind).")
        else:
            url = media if derivative is None else media.rstrip("/") + f"/{derivative}/"
        path = self._t.relative(url)
        if target is None:
            return self._t.send("GET", path).content
        target = Path(target)
        self._t.download(path, target, on_progress)
        return target
