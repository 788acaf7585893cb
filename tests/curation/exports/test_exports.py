"""Raw exports of votes and verdicts (curation.exports): what the rows hold on
a known fixture (canonical and as displayed, revisions, pseudonyms), the
three formats, the domain filter, who may download them, that the response
streams, and that the queries do not grow with the rows."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.loop.service import Vote, claim_next_item, revise_judgement, submit_judgement
from curation.exports import formats, records, service
from curation.models import Verdict
from tests.factories import (
    make_assignment,
    make_item,
    make_judgement,
    make_member,
    make_project,
    make_user,
)

pytestmark = pytest.mark.django_db

VOTE_NAMES = [name for name, _ in records.VOTE_COLUMNS]
VERDICT_NAMES = [name for name, _ in records.VERDICT_COLUMNS]
SECRET_MODELS = ("secret-model-alpha", "secret-model-beta")


def make_world():
    """Two items in two domains: a correctness item (vqa) voted on by ann
    (shown swapped, revised once) and bob (not swapped), a preference item
    voted on by ann; a verdict each, one resolved by the curator."""
    project = make_project(slug="exp", votes_per_item=2)
    vqa = project.domains.get(slug="vqa")
    pref = project.domains.get(slug="general_preference")
    ann = make_member(project, pseudonym="P-ann")
    bob = make_member(project, pseudonym="")  # no pseudonym: annotator-<id>
    curator = make_member(project, role="curator", pseudonym="C-cur")
    first = make_item(
        project, domain=vqa, external_id="vqa_1", model_1=SECRET_MODELS[0], model_2=SECRET_MODELS[1]
    )
    second = make_item(project, domain=pref, external_id="pref_1")
    claimed = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    a1 = make_assignment(first, ann, shown_swapped=True, claimed_at=claimed)
    make_judgement(
        a1,
        "2",
        revision=1,
        is_current=False,
        correct_1="no",
        correct_2="yes",
        rationale="=first thought",
        confidence=1,
    )
    make_judgement(
        a1,
        "1",
        revision=2,
        correct_1="yes",
        correct_2="unsure",
        rationale="Response 1 reads the sign right.",
        confidence=3,
        seconds_spent=12.5,
        active_seconds=10.0,
    )
    a2 = make_assignment(first, bob, shown_swapped=False, claimed_at=claimed)
    make_judgement(a2, "1", correct_1="yes", correct_2="no", rationale="Sign says STOP.")
    a3 = make_assignment(second, ann, shown_swapped=False, claimed_at=claimed)
    make_judgement(a3, "tie", rationale="Both fine.", flagged_problem=True, problem_reason="blur")
    Verdict.objects.create(
        item=first,
        project=project,
        status="resolved",
        final_choice="1",
        provenance="adjudicated",
        reason="Checked the sign.",
        decided_by=curator,
    )
    Verdict.objects.create(item=second, project=project)
    return {
        "project": project,
        "vqa": vqa,
        "pref": pref,
        "ann": ann,
        "bob": bob,
        "curator": curator,
        "items": (first, second),
    }


def rows_of(kind, world, domain=None):
    names = VOTE_NAMES if kind == "votes" else VERDICT_NAMES
    return [
        dict(zip(names, row, strict=True))
        for row in service.export_rows(project=world["project"], kind=kind, domain=domain)
    ]


def curator_client(client, world):
    client.force_login(world["curator"])
    return client


def download(client, url) -> bytes:
    response = client.get(url)
    assert response.status_code == 200, response.content[:300]
    assert response.streaming
    return b"".join(response.streaming_content)


# --- The rows -------------------------------------------------------------------------------


def test_every_revision_is_a_row_in_canonical_and_displayed_terms():
    world = make_world()
    votes = rows_of("votes", world)
    assert len(votes) == 4
    old, new, bobs, tie = votes
    # ann saw response 2 on the left: her canonical "1" was a click on the right.
    assert (old["revision"], old["is_current"], new["revision"], new["is_current"]) == (
        1,
        False,
        2,
        True,
    )
    assert old["assignment_id"] == new["assignment_id"]
    assert new["choice"] == "1" and new["shown_left"] == "2"
    assert new["choice_displayed"] == "right"
    assert (new["correct_1"], new["correct_2"]) == ("yes", "unsure")
    assert (new["correct_left"], new["correct_right"]) == ("unsure", "yes")
    assert old["choice"] == "2" and old["choice_displayed"] == "left"
    assert (old["correct_left"], old["correct_right"]) == ("yes", "no")
    # bob saw them in canonical order.
    assert bobs["choice"] == "1" and bobs["shown_left"] == "1"
    assert bobs["choice_displayed"] == "left"
    assert (bobs["correct_left"], bobs["correct_right"]) == ("yes", "no")
    assert tie["choice"] == "tie" and tie["choice_displayed"] == "tie"
    assert tie["flagged_problem"] is True and tie["problem_reason"] == "blur"
    assert new["confidence"] == 3 and new["seconds_spent"] == 12.5
    assert new["active_seconds"] == 10.0
    assert new["rationale"] == "Response 1 reads the sign right."
    assert new["claimed_at"] == datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    assert new["voted_at"] >= new["claimed_at"]
    assert (new["project"], new["domain"], new["item"]) == ("exp", "vqa", "vqa_1")


def test_annotators_are_named_as_in_releases():
    world = make_world()
    votes = rows_of("votes", world)
    assert [v["annotator"] for v in votes] == [
        "P-ann",
        "P-ann",
        f"annotator-{world['bob'].pk}",
        "P-ann",
    ]
    assert records.pseudonym_of({7: "X"}, 7) == "X"
    assert records.pseudonym_of({7: ""}, 7) == "annotator-7"
    assert records.pseudonym_of({}, None) == ""


def test_verdict_rows_carry_status_choice_provenance_and_tallies():
    world = make_world()
    resolved, waiting = rows_of("verdicts", world)
    assert resolved["item"] == "vqa_1" and resolved["domain"] == "vqa"
    assert (resolved["status"], resolved["final_choice"], resolved["provenance"]) == (
        "resolved",
        "1",
        "adjudicated",
    )
    assert resolved["decided_by"] == "C-cur"
    assert (resolved["votes_1"], resolved["votes_2"], resolved["votes_tie"]) == (2, 0, 0)
    assert waiting["status"] == "needs_votes" and waiting["decided_by"] == ""
    assert waiting["votes_tie"] == 1


def test_the_domain_filter_keeps_one_domains_rows():
    world = make_world()
    votes = rows_of("votes", world, domain=world["pref"])
    assert [v["item"] for v in votes] == ["pref_1"]
    verdicts = rows_of("verdicts", world, domain=world["vqa"])
    assert [v["item"] for v in verdicts] == ["vqa_1"]


def test_votes_cast_through_the_loop_map_back_to_what_was_shown():
    project = make_project(votes_per_item=3)
    item = make_item(project, domain=project.domains.get(slug="general_preference"))
    Verdict.objects.create(item=item, project=project)
    shown = {}
    for _ in range(2):
        annotator = make_member(project)
        assignment = claim_next_item(project=project, annotator=annotator)
        submit_judgement(
            assignment_id=assignment.pk,
            annotator=annotator,
            vote=Vote(choice="2", rationale="right one"),
        )
        shown[assignment.pk] = assignment.shown_swapped
    revise_judgement(
        assignment_id=assignment.pk, annotator=annotator, vote=Vote(choice="1", rationale="no")
    )
    votes = [
        dict(zip(VOTE_NAMES, row, strict=True))
        for row in service.export_rows(project=project, kind="votes")
    ]
    assert len(votes) == 3
    for vote in votes:
        swapped = shown[vote["assignment_id"]]
        assert vote["shown_left"] == ("2" if swapped else "1")
        left_is_choice = vote["choice"] == vote["shown_left"]
        assert vote["choice_displayed"] == ("left" if left_is_choice else "right")
    assert [v["is_current"] for v in votes if v["assignment_id"] == assignment.pk] == [False, True]
    assert [v["choice"] for v in votes if v["assignment_id"] == assignment.pk] == ["2", "1"]


# --- Formats ------------------------------------------------------------------------------


def test_csv_has_the_columns_and_neutralises_formulas(client):
    world = make_world()
    body = download(curator_client(client, world), reverse("export_votes", args=["exp"]))
    table = list(csv.DictReader(io.StringIO(body.decode())))
    assert list(table[0]) == VOTE_NAMES
    assert len(table) == 4
    assert table[0]["rationale"] == "'=first thought"  # a spreadsheet must not run it
    assert table[0]["is_current"] == "false" and table[1]["is_current"] == "true"
    assert table[1]["claimed_at"] == "2026-03-01T12:00:00+00:00"
    assert table[3]["confidence"] == ""


def test_jsonl_has_one_object_a_line_with_the_text_verbatim(client):
    world = make_world()
    url = reverse("export_votes", args=["exp"]) + "?file_format=jsonl"
    body = download(curator_client(client, world), url)
    lines = [json.loads(line) for line in body.decode().splitlines()]
    assert len(lines) == 4 and list(lines[0]) == VOTE_NAMES
    assert lines[0]["rationale"] == "=first thought"
    assert lines[0]["is_current"] is False and lines[3]["confidence"] is None
    verdicts = download(client, reverse("export_verdicts", args=["exp"]) + "?file_format=jsonl")
    assert [json.loads(line)["item"] for line in verdicts.decode().splitlines()] == [
        "vqa_1",
        "pref_1",
    ]


def test_parquet_is_typed_and_equals_the_rows(client):
    pq = pytest.importorskip("pyarrow.parquet")
    world = make_world()
    url = reverse("export_votes", args=["exp"]) + "?file_format=parquet"
    body = download(curator_client(client, world), url)
    table = pq.read_table(io.BytesIO(body))
    assert table.column_names == VOTE_NAMES
    assert str(table.schema.field("voted_at").type) == "timestamp[us, tz=UTC]"
    assert str(table.schema.field("is_current").type) == "bool"
    assert table.to_pylist() == rows_of("votes", world)
    verdicts = download(client, reverse("export_verdicts", args=["exp"]) + "?file_format=parquet")
    assert pq.read_table(io.BytesIO(verdicts)).to_pylist() == rows_of("verdicts", world)


def test_parquet_streams_a_row_group_at_a_time():
    pq = pytest.importorskip("pyarrow.parquet")
    columns = (("n", "int"), ("text", "string"))
    read = []

    def rows():
        for n in range(25):
            read.append(n)
            yield (n, f"row {n}")

    pieces, read_before = [], []
    for piece in formats.parquet_pieces(columns, rows(), row_group_rows=10):
        pieces.append(piece)
        read_before.append(len(read))
    # Each full row group is sent as soon as it is written; the last one goes
    # out with the footer.
    assert read_before == [10, 20, 25]
    assert pieces[0].startswith(b"PAR1") and pieces[-1].endswith(b"PAR1")
    parquet = pq.ParquetFile(io.BytesIO(b"".join(pieces)))
    assert parquet.num_row_groups == 3
    assert parquet.read().column("n").to_pylist() == list(range(25))


def test_an_empty_project_exports_a_header_or_an_empty_file(client):
    project = make_project(slug="empty")
    client.force_login(make_member(project, role="curator"))
    body = download(client, reverse("export_votes", args=["empty"]))
    assert body.decode().strip() == ",".join(VOTE_NAMES)
    url = reverse("export_verdicts", args=["empty"]) + "?file_format=jsonl"
    assert download(client, url) == b""
    if formats.parquet_available():
        import pyarrow.parquet as pq

        body = download(client, reverse("export_votes", args=["empty"]) + "?file_format=parquet")
        assert pq.read_table(io.BytesIO(body)).column_names == VOTE_NAMES


def test_the_file_is_named_for_project_domain_kind_and_time(client):
    world = make_world()
    response = curator_client(client, world).get(
        reverse("export_verdicts", args=["exp"]) + "?domain=vqa&file_format=jsonl"
    )
    disposition = response["Content-Disposition"]
    assert disposition.startswith('attachment; filename="exp-vqa-verdicts-')
    assert disposition.endswith('Z.jsonl"')
    assert response["Content-Type"].startswith("application/x-ndjson")
    at = datetime(2026, 3, 1, 12, 0, 5, tzinfo=UTC)
    name = service.export_filename(project=world["project"], kind="votes", file_format="csv", at=at)
    assert name == "exp-all-votes-20260301T120005Z.csv"


def test_model_names_are_in_no_export(client):
    world = make_world()
    client = curator_client(client, world)
    for name in ("export_votes", "export_verdicts"):
        for file_format in ("csv", "jsonl"):
            body = download(client, reverse(name, args=["exp"]) + f"?file_format={file_format}")
            assert not any(secret.encode() in body for secret in SECRET_MODELS)


# --- Who may, and what a bad request gets ------------------------------------------------


@pytest.mark.parametrize(
    ("role", "expected"),
    [("annotator", 403), ("outsider", 404), ("curator", 200), ("admin", 200)],
)
def test_only_the_projects_curators_and_admins_may_export(client, role, expected):
    world = make_world()
    user = make_user() if role == "outsider" else make_member(world["project"], role=role)
    client.force_login(user)
    for name in ("export_votes", "export_verdicts"):
        assert client.get(reverse(name, args=["exp"])).status_code == expected
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    for name in ("api_export_votes", "api_export_verdicts"):
        assert api.get(reverse(name, args=["exp"])).status_code == expected


def test_an_admin_of_another_project_cannot_export_this_one(client):
    make_world()
    other = make_project(slug="other")
    client.force_login(make_member(other, role="admin"))
    assert client.get(reverse("export_votes", args=["exp"])).status_code == 404


def test_bad_format_and_unknown_domain_are_refused(client):
    world = make_world()
    client = curator_client(client, world)
    url = reverse("export_votes", args=["exp"])
    assert client.get(url + "?file_format=xlsx").status_code == 400
    assert client.get(url + "?domain=nope").status_code == 404
    api = APIClient()
    api.force_authenticate(world["curator"])
    api_url = reverse("api_export_votes", args=["exp"])
    response = api.get(api_url + "?file_format=xlsx")
    assert response.status_code == 400 and "file_format" in response.json()["error"]["fields"]
    response = api.get(api_url + "?domain=nope")
    assert response.status_code == 400 and "domain" in response.json()["error"]["fields"]


def test_without_pyarrow_parquet_is_refused_with_the_install_hint(client, monkeypatch):
    world = make_world()
    monkeypatch.setattr(formats, "parquet_available", lambda: False)
    client = curator_client(client, world)
    response = client.get(reverse("export_votes", args=["exp"]) + "?file_format=parquet")
    assert response.status_code == 302
    assert response["Location"] == reverse("agreement", args=["exp"])
    page = client.get(response["Location"])
    assert "parquet" in page.content.decode() and "pyarrow" in page.content.decode()
    assert b'value="parquet" disabled' in page.content
    api = APIClient()
    api.force_authenticate(world["curator"])
    response = api.get(reverse("api_export_votes", args=["exp"]) + "?file_format=parquet")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "parquet_extra_missing"


def test_the_api_streams_the_same_file_whatever_the_client_accepts():
    world = make_world()
    api = APIClient()
    api.force_authenticate(world["curator"])
    url = reverse("api_export_votes", args=["exp"]) + "?domain=general_preference"
    response = api.get(url, HTTP_ACCEPT="text/csv")
    assert response.status_code == 200 and response.streaming
    body = b"".join(response.streaming_content).decode()
    assert body.splitlines()[0] == ",".join(VOTE_NAMES)
    assert len(body.splitlines()) == 2


def test_the_agreement_and_curation_pages_offer_the_export(client):
    world = make_world()
    client = curator_client(client, world)
    for name in ("agreement", "curation_queue"):
        page = client.get(reverse(name, args=["exp"])).content.decode()
        assert reverse("export_votes", args=["exp"]) in page
        assert reverse("export_verdicts", args=["exp"]) in page
        assert '<option value="vqa">' in page


# --- Bounded: queries and memory do not grow with the rows -----------------------------------


def _add_votes(project, n_items: int) -> None:
    domain = project.domains.get(slug="vqa")
    annotator = make_member(project, pseudonym=f"P{n_items}")
    for _ in range(n_items):
        item = make_item(project, domain=domain)
        Verdict.objects.create(item=item, project=project)
        make_judgement(make_assignment(item, annotator), "1", correct_1="yes", correct_2="no")


@pytest.mark.parametrize("kind", ["votes", "verdicts"])
@pytest.mark.parametrize("file_format", ["csv", "jsonl", "parquet"])
def test_queries_do_not_grow_with_the_rows(
    client, django_assert_max_num_queries, kind, file_format, monkeypatch
):
    if file_format == "parquet":
        pytest.importorskip("pyarrow")
    monkeypatch.setattr(service, "CHUNK", 3)  # several chunks even for a few rows
    world = make_world()
    client = curator_client(client, world)
    url = reverse(f"export_{kind}", args=["exp"]) + f"?file_format={file_format}&domain=vqa"
    counts = []
    for more in (0, 20):
        _add_votes(world["project"], more)
        with django_assert_max_num_queries(10) as captured:
            download(client, url)
        counts.append(len(captured))
    assert counts[0] == counts[1]


def test_an_annotator_has_the_same_name_in_an_export_and_a_release(tmp_path):
    from annotate.models import Item, Membership
    from tests.curation.releases.test_releases import built, make_release_project, media

    project = make_release_project(tmp_path, slug="same-names")
    nameless = make_user()  # a voter without a pseudonym: annotator-<id> in both
    Membership.objects.create(project=project, user=nameless, role="annotator")
    item = Item.objects.get(project=project, external_id="vqa_1")
    make_judgement(make_assignment(item, nameless))
    release = built(project)
    provenance = [
        json.loads(line)
        for line in (media(release.folder) / "provenance.jsonl").read_text().splitlines()
    ]
    released = {(p["ID"], v["annotator"]) for p in provenance for v in p["votes"]}
    exported = {
        (row[4], row[5])  # item, annotator
        for row in service.export_rows(project=project, kind="votes")
        if row[4] in {"pref_1", "vqa_1"}
    }
    assert released == exported
    assert ("vqa_1", f"annotator-{nameless.pk}") in exported
