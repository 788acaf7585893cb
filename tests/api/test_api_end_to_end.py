"""The issue's "done when": purely through the API, with tokens, a script
imports items, several annotators judge them until they are agreed or
contested, a curator adjudicates, cuts a release, downloads it, uploads
predictions and gets the official scorer's per-category numbers."""

import hashlib
import io
import json
import zipfile

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from curation.benchmarks.mrb import scoring, scoring_input, scoring_output
from tests.factories import make_member, make_project, png_bytes

pytestmark = pytest.mark.django_db

# (ID, Category): the ID prefixes exercise the official sub-buckets.
ITEMS = [
    ("mathvista_1", "reasoning"),
    ("math_2", "reasoning"),
    ("code_3", "reasoning"),
    ("pairs_4", "safety"),
    ("tox_5", "safety"),
    ("vqa_6", "vqa"),
    ("vqa_7", "vqa"),
    ("know_8", "knowledge"),
    ("gp_9", "open_generation/preference_task"),
    ("gc_10", "open_generation/correctness_task"),
]
# Annotators split 2-1 on these: contested, then resolved by the curator for Output2.
SPLIT = {"math_2", "pairs_4", "vqa_7"}


def dataset() -> tuple[bytes, bytes, dict]:
    records = [
        {
            "ID": ext_id,
            "Text": f"Question {ext_id}?",
            "Image": f"images/{n % 2}.png",
            "Output1": f"First answer to {ext_id}.",
            "Output2": f"Second answer to {ext_id}.",
            "Better": "Output1",
            "Category": category,
        }
        for n, (ext_id, category) in enumerate(ITEMS)
    ]
    images = io.BytesIO()
    with zipfile.ZipFile(images, "w") as zf:
        zf.writestr("images/0.png", png_bytes(color=(10, 200, 10)))
        zf.writestr("images/1.png", png_bytes(color=(10, 10, 200)))
    by_prompt = {r["Text"]: r for r in records}
    return json.dumps(records).encode(), images.getvalue(), by_prompt


def client_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def multipart(name: str, data: bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, data)


def annotate_all(client, slug, by_prompt, *, dissent: bool) -> int:
    """Judge until nothing is left; returns how many were judged. The script
    knows the dataset, so it finds Output1 among the displayed sides by text."""
    judged = 0
    while True:
        r = client.post(f"/api/v1/projects/{slug}/assignments/next/")
        if r.status_code == 204:
            return judged
        assert r.status_code == 200, r.content
        a = r.json()
        record = by_prompt[a["prompt"]]
        output1_side = "left" if a["left"] == record["Output1"] else "right"
        other = "right" if output1_side == "left" else "left"
        pick = other if dissent and record["ID"] in SPLIT else output1_side
        vote = {"choice": pick, "rationale": "compared both"}
        if a["domain"]["kind"] == "correctness":
            vote.update(
                {
                    f"correct_{pick}": "yes",
                    f"correct_{'left' if pick == 'right' else 'right'}": "no",
                }
            )
        r = client.post(
            a["id"] and f"/api/v1/assignments/{a['id']}/judgement/", vote, format="json"
        )
        assert r.status_code == 201, r.content
        judged += 1


def test_a_script_runs_the_whole_pipeline_through_the_api(django_capture_on_commit_callbacks):
    project = make_project(slug="e2e", votes_per_item=3, escalation_votes=0)
    admin = client_for(make_member(project, role="admin"))
    curator = client_for(make_member(project, role="curator"))
    annotators = [client_for(make_member(project, role="annotator")) for _ in range(3)]
    data, images, by_prompt = dataset()

    # A broken file is refused with problems naming file, line and field; nothing is written.
    broken = json.loads(data)
    del broken[1]["Output2"]
    r = admin.post(
        "/api/v1/projects/e2e/imports/",
        {
            "dataset": multipart("broken.json", json.dumps(broken).encode()),
            "images": multipart("images.zip", images),
        },
        format="multipart",
    )
    assert r.status_code == 400, r.content
    error = r.json()["error"]
    assert error["code"] == "import_failed"
    assert any(
        p["field"] == "Output2" and p["file"].endswith("broken.json") for p in error["problems"]
    )
    assert project.items.count() == 0

    r = admin.post(
        "/api/v1/projects/e2e/imports/",
        {"dataset": multipart("items.json", data), "images": multipart("images.zip", images)},
        format="multipart",
    )
    assert r.status_code == 200, r.content
    assert r.json()["created"] == len(ITEMS)

    # Three annotators; the third dissents on the SPLIT items.
    for n, client in enumerate(annotators):
        assert annotate_all(client, "e2e", by_prompt, dissent=n == 2) == len(ITEMS)

    r = curator.get("/api/v1/projects/e2e/verdicts/", {"status": "contested"})
    contested = r.json()["results"]
    assert {v["external_id"] for v in contested} == SPLIT
    assert all(
        v["votes"] == {"response_1": 2, "response_2": 1, "tie": 0, "ranked": 0} for v in contested
    )
    agreed = curator.get("/api/v1/projects/e2e/verdicts/", {"status": "agreed"}).json()
    assert agreed["count"] == len(ITEMS) - len(SPLIT)

    for v in contested:
        url = f"/api/v1/projects/e2e/verdicts/{v['item_id']}/"
        detail = curator.get(url).json()
        assert len(detail["current_votes"]) == 3
        no_reason = curator.post(
            url + "decision/",
            {"action": "resolve", "choice": "2", "reason": "", "version": detail["version"]},
            format="json",
        )
        assert no_reason.status_code == 400
        assert "reason" in no_reason.json()["error"]["fields"]
        r = curator.post(
            url + "decision/",
            {
                "action": "resolve",
                "choice": "2",
                "reason": "the second answer is right",
                "version": detail["version"],
            },
            format="json",
        )
        assert r.status_code == 200, r.content
        assert r.json()["status"] == "resolved"
        stale = curator.post(
            url + "decision/",
            {
                "action": "resolve",
                "choice": "1",
                "reason": "changed my mind",
                "version": detail["version"],
            },
            format="json",
        )
        assert stale.status_code == 409
        assert stale.json()["error"]["code"] == "stale"

    summary = curator.get("/api/v1/projects/e2e/agreement/").json()
    assert summary["domains"][-1]["domain"] == "all"
    assert summary["domains"][-1]["n_votes"] == 3 * len(ITEMS)

    with django_capture_on_commit_callbacks(execute=True):
        r = curator.post("/api/v1/projects/e2e/releases/", {"version": "v1"}, format="json")
    assert r.status_code == 202, r.content
    release_url = f"/api/v1/projects/e2e/releases/{r.json()['id']}/"
    release = curator.get(release_url).json()
    assert release["status"] == "ready", release
    assert release["progress"]["done"] == release["progress"]["total"] == len(ITEMS)

    r = curator.get(release["download_url"])
    assert r.status_code == 200
    archive = b"".join(r.streaming_content)
    assert hashlib.sha256(archive).hexdigest() == release["sha256"] == r["X-Content-SHA256"]
    with zipfile.ZipFile(io.BytesIO(archive)) as zf:
        name = next(n for n in zf.namelist() if n.endswith("/all_data.json"))
        records = json.loads(zf.read(name))
    better = {rec["ID"]: rec["Better"] for rec in records}
    # The resolved items' chosen response is Output2 of the source; slots are shuffled.
    assert len(better) == len(ITEMS)

    # Predictions: right on most, wrong on two, no verdict (random fallback) on one.
    lines = []
    for n, rec in enumerate(records):
        right = "A" if rec["Better"] == "Output1" else "B"
        wrong = "B" if right == "A" else "A"
        text = "I cannot tell." if n == 0 else f"[[{wrong if n in (1, 4) else right}]]"
        lines.append(json.dumps({"ID": rec["ID"], "output": text}))
    predictions = "\n".join(lines).encode()
    r = curator.post(
        release_url + "evaluations/",
        {"name": "judge-1", "predictions": multipart("preds.jsonl", predictions)},
        format="multipart",
    )
    assert r.status_code == 201, r.content
    expected = scoring_output.report_as_dict(
        scoring.score(
            records,
            scoring_input.parse_predictions(
                predictions.decode().split("\n"), filename="preds.jsonl"
            ),
        )
    )["official"]["groups"]
    assert r.json()["per_category"] == expected
    names = {g["name"] for g in expected}
    assert {"reasoning/math", "reasoning/coding", "safety/bias", "safety/toxicity"} <= names
    detail = curator.get(release_url + f"evaluations/{r.json()['id']}/").json()
    assert detail["per_category"] == expected
    assert curator.get(release_url + "evaluations/").json()["results"][0]["name"] == "judge-1"
