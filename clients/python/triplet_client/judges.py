"""LLM judges (README "Judges"): OpenAI-compatible endpoints, judge runs
over a ready release (a leaderboard entry) or over the project's benchmark
items (votes for the calibration report), followed, cancelled, resumed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from triplet_client.errors import JudgeRunFailed
from triplet_client.models import Project, Release, from_json
from triplet_client.quality_models import Calibration, JudgeEndpoint, JudgeRun
from triplet_client.transport import Resource, id_of, slug_of
from triplet_client.waiting import poll_until


def _given(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


class JudgesApi(Resource):
    def judge_endpoints(self, project: str | Project) -> Iterator[JudgeEndpoint]:
        """The project's judge endpoints (curators; never their keys)."""
        for row in self._t.pages(f"projects/{slug_of(project)}/judge-endpoints/"):
            yield from_json(JudgeEndpoint, row)

    def add_judge_endpoint(
        self,
        project: str | Project,
        name: str,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout_seconds: float | None = None,
    ) -> JudgeEndpoint:
        """Add an OpenAI-compatible endpoint (admins): `base_url` up to /v1;
        the key is stored encrypted and never returned."""
        body = _given(
            name=name,
            base_url=base_url,
            model=model,
            api_key=api_key,
            temperature=temperature,
            max_tokens=max_tokens,
            timeout_seconds=timeout_seconds,
        )
        path = f"projects/{slug_of(project)}/judge-endpoints/"
        return from_json(JudgeEndpoint, self._t.json("POST", path, json=body))

    def start_judge_run(
        self,
        project: str | Project,
        endpoint: int | JudgeEndpoint,
        name: str,
        *,
        release: int | Release | None = None,
        swapped: bool = False,
        scoring: str | None = None,
        concurrency: int | None = None,
        video_as: str | None = None,
        video_frames: int | None = None,
    ) -> JudgeRun:
        """Start a judge run in the background (curators; wait_for_judge_run).
        With `release`: over that ready release, scored onto its leaderboard
        (`swapped`: a second pass in the other order; `video_as` frames or
        video). Without: over the project's benchmark items in both orders,
        for calibration(). `scoring`: a benchmark's key (default: inferred)."""
        endpoint_id = endpoint if isinstance(endpoint, int) else endpoint.id
        body = _given(endpoint=endpoint_id, name=name, scoring=scoring, concurrency=concurrency)
        if release is None:
            path = f"projects/{slug_of(project)}/judge-runs/"
        else:
            body.update(swapped=swapped, **_given(video_as=video_as, video_frames=video_frames))
            path = f"projects/{slug_of(project)}/releases/{id_of(release)}/judge-runs/"
        return JudgeRun.from_api(self._t.json("POST", path, json=body))

    def judge_runs(
        self, project: str | Project, *, release: int | Release | None = None
    ) -> Iterator[JudgeRun]:
        """Runs over `release`, or (release=None) over the project's items; newest first."""
        path = f"projects/{slug_of(project)}/judge-runs/"
        if release is not None:
            path = f"projects/{slug_of(project)}/releases/{id_of(release)}/judge-runs/"
        for row in self._t.pages(path):
            yield JudgeRun.from_api(row)

    def judge_run(self, project: str | Project, run: int | JudgeRun) -> JudgeRun:
        path = f"projects/{slug_of(project)}/judge-runs/{id_of(run)}/"
        return JudgeRun.from_api(self._t.json("GET", path))

    def cancel_judge_run(self, project: str | Project, run: int | JudgeRun) -> JudgeRun:
        """Cancel a pending or running run (answers received are kept;
        Conflict otherwise)."""
        path = f"projects/{slug_of(project)}/judge-runs/{id_of(run)}/cancel/"
        return JudgeRun.from_api(self._t.json("POST", path))

    def resume_judge_run(self, project: str | Project, run: int | JudgeRun) -> JudgeRun:
        """Resume a failed, cancelled or stalled run: only unanswered items
        are sent (Conflict for a pending, running or complete one)."""
        path = f"projects/{slug_of(project)}/judge-runs/{id_of(run)}/resume/"
        return JudgeRun.from_api(self._t.json("POST", path))

    def wait_for_judge_run(
        self,
        project: str | Project,
        run: int | JudgeRun,
        *,
        on_progress: Callable[[JudgeRun], None] | None = None,
        poll_seconds: float = 1.0,
        timeout: float | None = None,
    ) -> JudgeRun:
        """Poll until the run is complete (returned) or failed or cancelled
        (JudgeRunFailed with the server's reason); `on_progress(run)` sees
        each change of status or progress; WaitTimeout after `timeout` s."""
        return poll_until(
            lambda: self.judge_run(project, run),
            state=lambda r: (r.status, r.progress, r.stale),
            done=lambda r: r.status == "complete",
            failure=lambda r: JudgeRunFailed(r) if r.status in ("failed", "cancelled") else None,
            describe=lambda r: (
                f"Judge run {r.name!r} still {r.status} "
                f"({r.progress.done}/{r.progress.total}{', stalled' if r.stale else ''})"
            ),
            on_progress=on_progress,
            poll_seconds=poll_seconds,
            timeout=timeout,
        )

    def calibration(self, project: str | Project) -> list[Calibration]:
        """Each project judge run against the human majority, per domain
        (row domain None: all): accuracy, kappa, position consistency, ECE,
        whether it can stand in for an annotator (curators)."""
        answer = self._t.json("GET", f"projects/{slug_of(project)}/calibration/")
        # The stored report (computed in the background): its runs.
        return [Calibration.from_api(entry) for entry in answer["runs"]]

    def recompute_calibration(self, project: str | Project) -> bool:
        """Queue a recomputation of the stored calibration report (curators);
        False when one is already queued or running (it runs once more)."""
        answer = self._t.json("POST", f"projects/{slug_of(project)}/calibration/refresh/")
        return bool(answer["queued"])
