"""Issue 30: a vote export carries every field a vote has (graded strength on
the project's scale, canonical and as displayed, letter grades, correctness,
confidence, rationale, revision, times) in CSV, JSONL and Parquet, through
the page and the API, and the docs' column table is the export's."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse
from rest_framework.test import APIClient

from annotate.loop import rules
from annotate.loop.service import claim_next_item, submit_judgement
from annotate.models import Judgement
from curation.exports import records, service
from tests.factories import make_assignment, make_item, make_judgement, make_member, make_project

pytestmark = pytest.mark.django_db

VOTE_NAMES = [name for name, _ in records.VOTE_COLUMNS]
CLAIMED = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def judgement_fields() -> list:
    """Judgement's own columns, read from the model (not from a list kept here)."""
    return [f for f in Judgement._meta.get_fields() if f.concrete]


def test_every_judgement_field_has_an_export_column_that_reads_it():
    fields = judgement_fields()
    assert {f.name for f in fields} == set(records.JUDGEMENT_COLUMNS), (
        "a Judgement field is missing from (or stale in) records.JUDGEMENT_COLUMNS: "
        "export it (VOTE_COLUMNS, VOTE_FIELDS, vote_record) and document it in docs/exports.md"
    )
    assert set(records.JUDGEMENT_COLUMNS.values()) <= set(VOTE_NAMES)
    read = set(records.VOTE_FIELDS)
    for f in fields:
        assert ("pk" if f.primary_key else f.attname) in read, f.name


def graded_world(scale="graded6"):
    """A graded project whose reasoning domain asks correctness and grades:
    one vote revised (seen swapped), every field set away from its default."""
    project = make_project(slug="grx", preference_scale=scale, votes_per_item=2)
    domain = project.domains.get(slug="reasoning")
    domain.asks_grade = True
    domain.save()
    ann = make_member(project, pseudonym="P-ann")
    curator = make_member(project, role="curator", pseudonym="C-cur")
    item = make_item(project, domain=domain, external_id="mindcube_1")
    assignment = make_assignment(item, ann, shown_swapped=True, claimed_at=CLAIMED)
    make_judgement(assignment, "1", strength=3, revision=1, is_current=False, grade_1="A")
    make_judgement(
        assignment,
        "2",
        strength=-2,
        revision=2,
        grade_1="C",
        grade_2="A",
        correct_1="no",
        correct_2="yes",
        confidence=2,
        rationale="=B explains the rotation",
        seconds_spent=41.5,
        active_seconds=30.25,
        flagged_problem=True,
        problem_reason="second image is blurry",
    )
    return project, curator


def expected_cells(judgement: Judgement) -> dict:
    """What each Judgement field's column must hold, from the model instance."""
    out = {}
    for f in judgement_fields():
        value = judgement.pk if f.primary_key else getattr(judgement, f.attname)
        out[records.JUDGEMENT_COLUMNS[f.name]] = value
    return out


def download(client, url) -> bytes:
    response = client.get(url)
    assert response.status_code == 200, response.content[:300]
    assert response.streaming
    return b"".join(response.streaming_content)


def csv_cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, str) and value.startswith("="):
        return "'" + value
    return str(value)


@pytest.mark.parametrize("file_format", ["csv", "jsonl", "parquet"])
@pytest.mark.parametrize("via", ["page", "api"])
def test_every_field_of_a_vote_reaches_each_format_through_page_and_api(client, file_format, via):
    if file_format == "parquet":
        pytest.importorskip("pyarrow")
    project, curator = graded_world()
    query = f"?file_format={file_format}"
    if via == "page":
        client.force_login(curator)
        body = download(client, reverse("export_votes", args=[project.slug]) + query)
    else:
        api = APIClient()
        api.force_authenticate(curator)
        body = download(api, reverse("api_export_votes", args=[project.slug]) + query)
    if file_format == "csv":
        rows = list(csv.DictReader(io.StringIO(body.decode())))
    elif file_format == "jsonl":
        rows = [json.loads(line) for line in body.decode().splitlines()]
    else:
        import pyarrow.parquet as pq

        rows = pq.read_table(io.BytesIO(body)).to_pylist()
    assert list(rows[0]) == VOTE_NAMES
    judgements = Judgement.objects.order_by("revision")
    assert len(rows) == len(judgements) == 2
    for row, judgement in zip(rows, judgements, strict=True):
        for column, value in expected_cells(judgement).items():
            if file_format == "csv":
                value = csv_cell(value)
            elif file_format == "jsonl" and isinstance(value, datetime):
                value = value.isoformat()
            assert row[column] == value, (file_format, column)


def named_rows(project) -> list[dict]:
    return [
        dict(zip(VOTE_NAMES, row, strict=True))
        for row in service.export_rows(project=project, kind="votes")
    ]


def test_a_graded_vote_is_on_the_scale_canonical_and_as_displayed():
    project, _ = graded_world()
    old, new = named_rows(project)
    # Canonical: response 2 better (-2), MMRB2's 2 (6 = response 1 much better).
    assert (new["scale"], new["strength"], new["scale_value"]) == ("graded6", -2, 2)
    assert new["choice"] == "2"
    # Response 2 was on the left: the annotator picked "A better" (+2 to the left).
    assert (new["shown_left"], new["choice_displayed"]) == ("2", "left")
    assert (new["strength_displayed"], new["point_displayed"]) == (2, "A better")
    assert (new["grade_1"], new["grade_2"]) == ("C", "A")
    assert (new["grade_left"], new["grade_right"]) == ("A", "C")
    assert (new["correct_left"], new["correct_right"]) == ("yes", "no")
    assert (new["revision"], new["is_current"], old["revision"], old["is_current"]) == (
        2,
        True,
        1,
        False,
    )
    assert (old["strength"], old["scale_value"], old["point_displayed"]) == (3, 6, "B much better")
    assert new["claimed_at"] == CLAIMED and new["submitted_at"] is not None
    assert new["voted_at"] >= new["claimed_at"]


def test_a_seven_point_tie_and_an_ab_vote():
    project = make_project(slug="g7", preference_scale="graded7")
    item = make_item(project, domain=project.domains.get(slug="general_preference"))
    make_judgement(make_assignment(item), "tie", strength=0, rationale="same")
    (tie,) = named_rows(project)
    assert (tie["scale"], tie["strength"], tie["scale_value"]) == ("graded7", 0, 4)
    assert (tie["strength_displayed"], tie["point_displayed"]) == (0, "Tie")
    ab = make_project(slug="ab")
    make_judgement(make_assignment(make_item(ab)), "1")
    (vote,) = named_rows(ab)
    assert vote["scale"] == "ab"
    assert [vote[c] for c in ("strength", "scale_value", "strength_displayed")] == [None] * 3
    assert vote["point_displayed"] is None and vote["grade_1"] == ""


def test_what_the_annotator_pressed_comes_back_as_displayed():
    """Votes given through the loop, in displayed terms, each annotator with
    the order the server chose: the export's displayed columns are what was
    given, its canonical columns what the service stored."""
    project = make_project(slug="loop", preference_scale="graded6", votes_per_item=6)
    item = make_item(project, domain=project.domains.get(slug="general_preference"))
    given = {}
    for shown in (3, -1, 1, -3, 2, -2):
        user = make_member(project)
        assignment = claim_next_item(project=project, annotator=user)
        vote = rules.canonical_vote(
            rules.DisplayedVote(strength=shown, grade_left="", rationale="r"),
            order=assignment.display_order,
        )
        submit_judgement(assignment_id=assignment.pk, annotator=user, vote=vote)
        given[assignment.pk] = (shown, assignment.shown_swapped)
    rows = named_rows(project)
    assert {r["item"] for r in rows} == {item.external_id} and len(rows) == 6
    assert any(swapped for _, swapped in given.values())
    for row in rows:
        shown, swapped = given[row["assignment_id"]]
        assert row["strength_displayed"] == shown
        assert row["strength"] == (-shown if swapped else shown)


def test_the_graded_header():
    assert ",".join(VOTE_NAMES) == (
        "vote_id,assignment_id,project,domain,item,annotator,revision,is_current,choice,"
        "scale,strength,scale_value,grade_1,grade_2,correct_1,correct_2,shown_left,"
        "choice_displayed,strength_displayed,point_displayed,grade_left,grade_right,"
        "correct_left,correct_right,confidence,rationale,flagged_problem,problem_reason,"
        "claimed_at,submitted_at,voted_at,seconds_spent,active_seconds,imported,task"
    )


def documented_columns(section: str) -> list[str]:
    """The first column of the table under `section` in docs/exports.md."""
    text = (Path(settings.BASE_DIR) / "docs" / "exports.md").read_text()
    part = text.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z_0-9]+)` \|", part, flags=re.M)


def test_the_docs_table_lists_every_column_in_order():
    assert documented_columns("Votes") == VOTE_NAMES
    assert documented_columns("Verdicts") == [name for name, _ in records.VERDICT_COLUMNS]
