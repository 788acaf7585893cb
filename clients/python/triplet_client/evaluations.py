"""Scoring predictions against a release (README step 10) and its leaderboard."""

from __future__ import annotations

from collections.abc import Iterator

from triplet_client.models import Evaluation, ItemPrediction, Project, Release, from_json
from triplet_client.transport import Resource, Upload, id_of, segment, slug_of


class EvaluationsApi(Resource):
    def _base(self, project: str | Project, release: int | Release) -> str:
        return f"projects/{slug_of(project)}/releases/{id_of(release)}/evaluations/"

    def evaluate(
        self,
        project: str | Project,
        release: int | Release,
        name: str,
        predictions: Upload,
        *,
        swapped: Upload | None = None,
        predictions_format: str = "auto",
        official_compat: bool = False,
    ) -> Evaluation:
        """Upload a model's predictions for a ready release and score them
        as the benchmark's official scorer does (`per_category`), with the
        extras (macro average, CIs, coverage) in `extras`. MRB predictions:
        JSONL lines with ID and output / Label / score_1 and score_2.
        `swapped`: the same model with the order swapped."""
        data = {
            "name": name,
            "predictions_format": predictions_format,
            "official_compat": official_compat,
        }
        files = {"predictions": predictions, "swapped": swapped}
        return Evaluation.from_api(self._t.upload(self._base(project, release), files, data))

    def leaderboard(self, project: str | Project, release: int | Release) -> list[Evaluation]:
        """Every evaluation of the release, best accuracy first."""
        return [Evaluation.from_api(row) for row in self._t.pages(self._base(project, release))]

    def evaluation(
        self, project: str | Project, release: int | Release, evaluation: int | Evaluation
    ) -> Evaluation:
        path = self._base(project, release) + f"{id_of(evaluation)}/"
        return Evaluation.from_api(self._t.json("GET", path))

    def evaluation_items(
        self,
        project: str | Project,
        release: int | Release,
        evaluation: int | Evaluation,
        *,
        show: str = "wrong",
        category: str | None = None,
        sub_bucket: str | None = None,
    ) -> Iterator[ItemPrediction]:
        """An entry's per-item results: show wrong (default), right or all."""
        path = self._base(project, release) + f"{id_of(evaluation)}/items/"
        params = {"show": show, "category": category, "sub_bucket": sub_bucket}
        for row in self._t.pages(path, params):
            yield from_json(ItemPrediction, row)

    def item_predictions(self, project: str | Project, item_id: int) -> list[ItemPrediction]:
        """How every leaderboard entry (of any release) judged one item."""
        path = f"projects/{slug_of(project)}/items/{segment(item_id)}/predictions/"
        return [from_json(ItemPrediction, row) for row in self._t.json("GET", path)]
