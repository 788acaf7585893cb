"""How far the labels can be trusted (README "Agreement" and "Label
quality"): agreement per domain with its bootstrap intervals, the annotator
statistics, the label-quality analysis and its suspected label errors."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from triplet_client.errors import LabelQualityFailed
from triplet_client.models import Project, from_json
from triplet_client.quality_models import Agreement, AnnotatorStats, LabelQuality, Suspect
from triplet_client.transport import Resource, segment, slug_of
from triplet_client.waiting import poll_until


def _ids(objects: Sequence[int | Any]) -> list[int]:
    return [o if isinstance(o, int) else o.id for o in objects]


class QualityApi(Resource):
    def agreement(self, project: str | Project) -> Agreement:
        """Agreement per domain (curators): alpha, kappa and rates now, the
        bootstrap intervals from the last refresh (`intervals_stale` when
        votes arrived since)."""
        return from_json(Agreement, self._t.json("GET", f"projects/{slug_of(project)}/agreement/"))

    def refresh_agreement(
        self,
        project: str | Project,
        *,
        wait: bool = True,
        on_progress: Callable[[Agreement], None] | None = None,
        poll_seconds: float = 1.0,
        timeout: float | None = None,
    ) -> Agreement:
        """Recompute the intervals in the background; wait=True polls until
        they are computed (WaitTimeout after `timeout` s) and returns them."""
        self._t.json("POST", f"projects/{slug_of(project)}/agreement/refresh/")
        if not wait:
            return self.agreement(project)
        return poll_until(
            lambda: self.agreement(project),
            state=lambda a: (a.intervals_computed_at, a.refresh_requested_at),
            done=lambda a: a.refresh_requested_at is None and a.intervals_computed_at is not None,
            failure=lambda a: None,
            describe=lambda a: "The agreement intervals are still being computed",
            on_progress=on_progress,
            poll_seconds=poll_seconds,
            timeout=timeout,
        )

    def annotator_stats(self, project: str | Project) -> AnnotatorStats:
        """The agreement page's annotator table (curators): votes, agreement
        and kappa with the majority, change in alpha, gold accuracy, left-pick
        rate with its interval and side test, tie rate, CROWDLAB quality."""
        answer = self._t.json("GET", f"projects/{slug_of(project)}/agreement/annotators/")
        return from_json(AnnotatorStats, answer)

    def label_quality(self, project: str | Project) -> LabelQuality:
        """The label-quality analysis (curators): status, summary, annotators."""
        answer = self._t.json("GET", f"projects/{slug_of(project)}/label-quality/")
        return from_json(LabelQuality, answer)

    def refresh_label_quality(
        self,
        project: str | Project,
        *,
        evaluations: Sequence[int | Any] = (),
        judge_runs: Sequence[int | Any] = (),
        wait: bool = True,
        on_progress: Callable[[LabelQuality], None] | None = None,
        poll_seconds: float = 1.0,
        timeout: float | None = None,
    ) -> LabelQuality:
        """Compute label quality again in the background from the votes,
        the leaderboard entries `evaluations` (the model ensemble) and the
        project judge runs `judge_runs`; wait=True polls until it is ready
        (LabelQualityFailed, WaitTimeout). Conflict `quality_extra_missing`
        when the server lacks cleanlab/crowd-kit."""
        body = {"evaluations": _ids(evaluations), "judge_runs": _ids(judge_runs)}
        path = f"projects/{slug_of(project)}/label-quality/refresh/"
        asked = from_json(LabelQuality, self._t.json("POST", path, json=body))
        if not wait:
            return asked
        return poll_until(
            lambda: self.label_quality(project),
            state=lambda q: (q.status, q.computed_at),
            done=lambda q: q.status == "ready",
            failure=lambda q: LabelQualityFailed(q) if q.status == "failed" else None,
            describe=lambda q: f"Label quality still {q.status}",
            on_progress=on_progress,
            poll_seconds=poll_seconds,
            timeout=timeout,
        )

    def suspects(
        self, project: str | Project, *, domain: str | None = None, view: str = "all"
    ) -> Iterator[Suspect]:
        """Suspected label errors, least trusted label first; view=unanimous:
        unanimous labels the models disagree with."""
        params = {"domain": domain, "view": view}
        for row in self._t.pages(f"projects/{slug_of(project)}/label-quality/suspects/", params):
            yield Suspect.from_api(row)

    def decide_suspect(
        self, project: str | Project, suspect: Suspect, action: str, reason: str = ""
    ) -> Suspect:
        """confirm (provenance becomes reviewed) or overturn (resolved for the
        other response; a reason is required) on the suspect's version."""
        body = {"action": action, "reason": reason, "version": suspect.version}
        path = (
            f"projects/{slug_of(project)}/label-quality/suspects/"
            f"{segment(suspect.item_id)}/decision/"
        )
        return Suspect.from_api(self._t.json("POST", path, json=body))
