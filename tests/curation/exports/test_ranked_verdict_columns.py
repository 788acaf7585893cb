"""The verdicts export of N-slot items (issue 33): a ranking project's rows
carry votes_ranked and the final ranking per slot (rank_1..rank_8), with
null pair tallies; a pair's N-slot columns are null."""

from __future__ import annotations

import pytest

from curation.exports import records, service
from curation.models import Verdict, VerdictRank
from tests.curation.benchmarks.ranked.test_ranked_end_to_end import (
    ranked_project,  # noqa: F401 (a fixture)
)

pytestmark = pytest.mark.django_db
NAMES = [name for name, _ in records.VERDICT_COLUMNS]


def rows(project):
    return {
        row["item"]: row
        for row in (
            dict(zip(NAMES, r, strict=True))
            for r in service.export_rows(project=project, kind="verdicts")
        )
    }


def test_a_ranking_projects_rows_carry_each_slots_final_place(ranked_project):  # noqa: F811
    project, _ = ranked_project
    VerdictRank.objects.filter(verdict__item__external_id="q2").delete()
    Verdict.objects.filter(item__external_id="q2").update(
        status="needs_votes", final_choice="", provenance=""
    )
    got = rows(project)
    assert [got["q1"][f"rank_{k}"] for k in range(1, 9)] == [2, 1, 3, 3, None, None, None, None]
    assert [got["q3"][f"rank_{k}"] for k in range(1, 9)] == [1, 2, 2, 4, 5, 6, 7, 8]
    assert [got["q4"][f"rank_{k}"] for k in range(1, 4)] == [3, 2, 1]
    assert got["q1"]["final_choice"] == "2" and got["q1"]["status"] == "agreed"
    # Undecided: no ranking; every N-slot row has null pair tallies.
    assert all(got["q2"][f"rank_{k}"] is None for k in range(1, 9))
    for row in got.values():
        assert (row["votes_1"], row["votes_2"], row["votes_tie"]) == (None, None, None)
        assert row["votes_ranked"] == 0


def test_more_rows_than_a_chunk_keep_their_own_rankings(ranked_project, monkeypatch):  # noqa: F811
    project, _ = ranked_project
    monkeypatch.setattr(service, "CHUNK", 3)
    got = rows(project)
    assert list(got) == ["q1", "q2", "q3", "q4"]
    assert [got["q4"][f"rank_{k}"] for k in range(1, 4)] == [3, 2, 1]
    assert [got["q2"][f"rank_{k}"] for k in range(1, 3)] == [1, 1]


def test_a_pairs_ranking_columns_are_null():
    row = (1, 5, "x", "agreed", "1", "majority", "", "", "", 0, 2, 1, 0, 3, None, 1, None, 0)
    out = dict(zip(NAMES, records.verdict_record(row, project="p", names={}, domains={5: "d"}),
                   strict=True))  # fmt: skip
    assert (out["votes_1"], out["votes_2"], out["votes_tie"]) == (2, 1, 0)
    assert out["votes_ranked"] is None and all(out[f"rank_{k}"] is None for k in range(1, 9))


def test_the_columns_reach_every_slot_a_verdict_ranks():
    from curation.models.verdicts import MAX_VERDICT_SLOTS

    assert records.MAX_SLOTS == MAX_VERDICT_SLOTS
