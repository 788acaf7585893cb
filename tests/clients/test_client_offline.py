"""The client's own rules, without a server (httpx.MockTransport): how
answers a live server rarely gives (a proxy's HTML error, a failed build, a
corrupted download, a hostile zip, a missing extra) come out in Python."""

import hashlib
import io
import json
import sys
import zipfile

import httpx
import pytest
from triplet_client import (
    ChecksumMismatch,
    Client,
    Export,
    ImportFailed,
    JudgeRunFailed,
    LabelQualityFailed,
    MissingExtra,
    MixFailed,
    ReleaseFailed,
    ServerError,
    StudioError,
    WaitTimeout,
)
from triplet_client.releases import safe_unzip

URL = "http://studio.test"


def client(handler) -> Client:
    return Client(URL, token="t0k", transport=httpx.MockTransport(handler))


def release_body(**overrides):
    body = {
        "id": 7,
        "version": "v1",
        "status": "building",
        "progress": {"done": 1, "total": 4, "percent": 25},
        "error": "",
        "sha256": "",
        "created_at": "2026-11-27T10:00:00Z",
    }
    return {**body, **overrides}


def test_every_request_carries_the_token_and_lists_follow_every_page():
    asked = []

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.headers["Authorization"] == "Token t0k"
        page = int(request.url.params["page"])
        asked.append((request.url.path, page, request.url.params["status"]))
        rows = [
            {
                "item_id": page * 10 + n,
                "external_id": f"x{n}",
                "domain": "vqa",
                "status": "agreed",
                "version": 1,
                "votes": {"response_1": 3, "response_2": 0, "tie": 0},
            }
            for n in range(2)
        ]
        return httpx.Response(
            200,
            json={"count": 6, "next": "x" if page < 3 else None, "previous": None, "results": rows},
        )

    verdicts = list(client(handler).verdicts("demo", status="agreed"))
    assert [v.item_id for v in verdicts] == [10, 11, 20, 21, 30, 31]
    assert verdicts[0].votes.response_1 == 3
    assert asked == [("/api/v1/projects/demo/verdicts/", n, "agreed") for n in (1, 2, 3)]


def test_a_proxys_html_error_is_a_server_error_with_its_text():
    def handler(request):
        return httpx.Response(502, text="<html>Bad gateway</html>")

    with pytest.raises(ServerError) as failed:
        client(handler).project("demo")
    assert (failed.value.status, failed.value.code) == (502, "http_502")
    assert "Bad gateway" in failed.value.message


def test_an_import_refusal_lists_every_problem():
    problems = [
        {
            "file": "a.json",
            "line": 3,
            "index": 2,
            "field": "Image",
            "message": "no image",
            "count": 40,
            "records": [2, 3, 4],
        },
        {
            "file": "a.json",
            "line": None,
            "index": None,
            "field": None,
            "message": "bad",
            "count": 1,
            "records": [],
        },
    ]

    def handler(request):
        body = {
            "error": {
                "code": "import_failed",
                "message": "refused",
                "fields": {},
                "problems": problems,
            }
        }
        return httpx.Response(400, json=body)

    with pytest.raises(ImportFailed) as refused:
        client(handler).import_items("demo", ("a.json", b"[]"))
    assert [p.count for p in refused.value.problems] == [40, 1]
    assert "a.json, line 3, record 2, field Image: no image (40 records)" in str(refused.value)


def test_a_failed_build_raises_with_the_servers_reason_and_waiting_has_a_limit():
    def failed(request):
        return httpx.Response(200, json=release_body(status="failed", error="disk full"))

    with pytest.raises(ReleaseFailed, match="disk full") as raised:
        client(failed).wait_for_release("demo", 7, poll_seconds=0)
    assert raised.value.release.project == "demo"

    def building(request):
        return httpx.Response(200, json=release_body())

    seen = []
    with pytest.raises(WaitTimeout, match="1/4"):
        client(building).wait_for_release(
            "demo", 7, on_progress=seen.append, poll_seconds=0.01, timeout=0.05
        )
    assert len(seen) == 1  # called on changes only
    assert seen[0].created_at.utcoffset().total_seconds() == 0


def zip_bytes(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return out.getvalue()


def test_a_download_whose_checksum_differs_is_refused_and_not_kept(tmp_path):
    archive = zip_bytes({"demo-v1/all_data.json": b"[]"})

    def handler(request):
        return httpx.Response(
            200,
            content=archive,
            headers={
                "X-Content-SHA256": "0" * 64,
                "Content-Disposition": 'attachment; filename="demo-v1.zip"',
            },
        )

    with pytest.raises(ChecksumMismatch):
        client(handler).download_release("demo", 7, tmp_path)
    assert list(tmp_path.iterdir()) == []

    def honest(request):
        sha = hashlib.sha256(archive).hexdigest()
        return httpx.Response(
            200,
            content=archive,
            headers={
                "X-Content-SHA256": sha,
                "Content-Disposition": 'attachment; filename="demo-v1.zip"',
            },
        )

    folder = client(honest).download_release("demo", 7, tmp_path)
    assert folder == tmp_path / "demo-v1" and (folder / "all_data.json").read_bytes() == b"[]"
    assert (tmp_path / "demo-v1.zip").read_bytes() == archive


def test_a_zip_reaching_outside_its_folder_is_not_unpacked(tmp_path):
    hostile = tmp_path / "r.zip"
    hostile.write_bytes(zip_bytes({"r/ok.json": b"{}", "r/../../evil.txt": b"x"}))
    (tmp_path / "out").mkdir()
    with pytest.raises(StudioError, match="unsafe member"):
        safe_unzip(hostile, tmp_path / "out")
    assert list((tmp_path / "out").iterdir()) == []
    assert not (tmp_path / "evil.txt").exists()


def test_a_missing_extra_says_how_to_install_it(monkeypatch):
    rows = Export("votes", [{"vote_id": 1, "strength": None, "voted_at": "2026-11-27T10:00:00Z"}])
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(MissingExtra, match=r"triplet-studio-client\[pandas\]"):
        rows.to_pandas()
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(MissingExtra, match=r"triplet-studio-client\[datasets\]"):
        rows.to_dataset()


def test_an_empty_export_is_an_empty_frame():
    def handler(request):
        assert request.url.params["file_format"] == "jsonl"
        return httpx.Response(200, text="", headers={"Content-Type": "application/x-ndjson"})

    export = client(handler).export_votes("demo")
    assert len(export) == 0 and len(export.to_pandas()) == 0


def test_no_url_or_token_says_where_to_get_one(monkeypatch):
    monkeypatch.delenv("TRIPLET_STUDIO_TOKEN", raising=False)
    with pytest.raises(StudioError, match="API token page"):
        Client(URL)
    monkeypatch.setenv("TRIPLET_STUDIO_TOKEN", "env-token")
    monkeypatch.setenv("TRIPLET_STUDIO_URL", URL)
    assert repr(Client()) == f"Client('{URL}')"


def test_a_skip_sends_its_reason_and_a_vote_leaves_out_what_was_not_given():
    sent = []

    def handler(request):
        sent.append((request.url.path, json.loads(request.content)))
        if request.url.path.endswith("/skip/"):
            return httpx.Response(200, json={"assignment": 5, "status": "skipped"})
        body = {
            "assignment": 5,
            "status": "submitted",
            "choice": "tie",
            "revision": 1,
            "already_submitted": False,
        }
        return httpx.Response(201, json=body)

    studio = client(handler)
    studio.skip(5, "the image does not load")
    judged = studio.judge(5, "tie", confidence=2)
    assert judged.next is None and judged.strength is None
    assert sent[0] == ("/api/v1/assignments/5/skip/", {"reason": "the image does not load"})
    path, vote = sent[1]
    assert path == "/api/v1/assignments/5/judgement/"
    assert vote["choice"] == "tie" and vote["confidence"] == 2
    assert "strength" not in vote and "active_seconds" not in vote


def test_an_upload_reports_its_bytes_and_leaves_a_given_file_open(tmp_path):
    received = {}

    def handler(request):
        received["body"] = request.read()
        body = {"format": "mrb", "created": 1, "updated": 0, "unchanged": 0, "images_stored": 0}
        return httpx.Response(200, json=body)

    given = io.BytesIO(b"[" + b" " * 300_000 + b"]")
    seen = []
    result = client(handler).import_items(
        "demo", ("big.json", given), gold_from_label=True, on_progress=lambda d, t: seen.append(d)
    )
    assert result.created == 1 and not given.closed
    assert seen[-1] == 300_002 and len(seen) > 1  # read in chunks as it was sent
    assert b'name="gold_from_label"\r\n\r\ntrue' in received["body"]
    assert b'filename="big.json"' in received["body"]


def test_a_ranking_vote_sends_only_its_fields():
    sent = []

    def handler(request):
        sent.append(json.loads(request.content))
        body = {"assignment": 5, "status": "submitted", "ranking": [1, 2, 2, 4]}
        return httpx.Response(201, json={**body, "revision": 1, "already_submitted": False})

    judged = client(handler).judge(5, ranking=(1, 2, 2, 4), grades=["A", "B", "B", "C"])
    assert (judged.ranking, judged.choice, judged.pick) == ([1, 2, 2, 4], "", None)
    assert sent == [
        {"ranking": [1, 2, 2, 4], "grades": ["A", "B", "B", "C"], "flagged_problem": False}
    ]


def test_media_urls_are_fetched_only_from_the_studio_with_the_token():
    asked = []

    def handler(request):
        asked.append((str(request.url), request.headers["Authorization"]))
        return httpx.Response(200, content=b"webp")

    studio = client(handler)
    path = "/api/v1/assignments/3/media/left/0/"
    assert studio.download_media(path, derivative="strip") == b"webp"
    assert studio.download_media(f"{URL}{path}") == b"webp"
    assert asked == [
        (f"{URL}{path}strip/", "Token t0k"),
        (f"{URL}{path}", "Token t0k"),
    ]
    for elsewhere in ("http://evil.test/api/v1/x/", "https://studio.test/api/v1/x/", "/admin/"):
        with pytest.raises(StudioError):
            studio.download_media(elsewhere)
    assert len(asked) == 2  # nothing sent anywhere else


def test_waiting_on_a_judge_run_a_mix_or_label_quality_ends_on_failure_or_timeout():
    run = {"id": 4, "name": "gpt", "status": "running", "error": ""}
    run["progress"] = {"done": 2, "total": 8, "percent": 25}

    def running(request):
        return httpx.Response(200, json=run)

    with pytest.raises(WaitTimeout, match="2/8"):
        client(running).wait_for_judge_run("demo", 4, poll_seconds=0.01, timeout=0.05)

    def cancelled(request):
        return httpx.Response(200, json={**run, "status": "cancelled", "error": "by cur"})

    with pytest.raises(JudgeRunFailed, match="by cur") as stopped:
        client(cancelled).wait_for_judge_run("demo", 4, poll_seconds=0)
    assert stopped.value.run.status == "cancelled"

    def failed_mix(request):
        return httpx.Response(
            200, json={"id": 1, "name": "m", "version": "v1", "status": "failed", "error": "empty"}
        )

    with pytest.raises(MixFailed, match="empty"):
        client(failed_mix).wait_for_mix(1, poll_seconds=0)

    def quality(request):
        if request.method == "POST":
            return httpx.Response(202, json={"available": True, "status": "pending"})
        return httpx.Response(200, json={"available": True, "status": "failed", "error": "oom"})

    with pytest.raises(LabelQualityFailed, match="oom"):
        client(quality).refresh_label_quality("demo", poll_seconds=0)


def test_the_client_package_imports_no_django():
    import subprocess

    code = "import sys, triplet_client; print(any(m.startswith('django') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
