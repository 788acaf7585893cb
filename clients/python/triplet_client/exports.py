"""Every vote or verdict of a project as rows, a pandas DataFrame or a
Hugging Face `datasets.Dataset` (the optional extras `pandas`, `datasets`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from triplet_client.errors import MissingExtra
from triplet_client.models import Project
from triplet_client.transport import Resource, slug_of


def _require(module: str, extra: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtra(
            f"This needs {module}: pip install 'triplet-studio-client[{extra}]'"
        ) from None


@dataclass(frozen=True)
class Export:
    """An export's rows (dicts of the server's columns, timestamps as
    ISO 8601 text), in the server's order."""

    kind: str  # votes or verdicts
    rows: list[dict[str, Any]]

    def __len__(self) -> int:
        return len(self.rows)

    def to_pandas(self) -> Any:
        """A pandas DataFrame: nullable dtypes (a vote without a strength
        is <NA>, not NaN), *_at columns as UTC datetimes."""
        pd = _require("pandas", "pandas")
        frame = pd.DataFrame.from_records(self.rows).convert_dtypes()
        for column in frame.columns:
            if str(column).endswith("_at"):
                frame[column] = pd.to_datetime(frame[column], utc=True)
        return frame

    def to_dataset(self) -> Any:
        """A `datasets.Dataset` with one row per record."""
        datasets = _require("datasets", "datasets")
        return datasets.Dataset.from_list(self.rows)


class ExportsApi(Resource):
    def _export(self, kind: str, project: str | Project, domain: str | None) -> Export:
        params = {"file_format": "jsonl", **({"domain": domain} if domain else {})}
        path = f"projects/{slug_of(project)}/exports/{kind}/"
        response = self._t.send("GET", path, params=params, timeout=self._t.upload_timeout)
        rows = [json.loads(line) for line in response.text.splitlines() if line.strip()]
        return Export(kind, rows)

    def export_votes(self, project: str | Project, *, domain: str | None = None) -> Export:
        """Every vote and revision (curators), canonical and as displayed,
        annotators by pseudonym: `.rows`, `.to_pandas()`, `.to_dataset()`."""
        return self._export("votes", project, domain)

    def export_verdicts(self, project: str | Project, *, domain: str | None = None) -> Export:
        """One row per item with its verdict and tallies (curators)."""
        return self._export("verdicts", project, domain)
