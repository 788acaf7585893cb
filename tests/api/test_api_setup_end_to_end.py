"""Issue 20's API side: a benchmark made from nothing through /api/v1/ only.
A user allowed to create projects makes one (empty preset), adds its domains,
invites and adds the team, imports, the team judges, a member is deactivated
(their lease returns), the curator resolves the splits, cuts a release and
scores predictions against it."""

import io
import json
import zipfile

import pytest
from django.contrib.auth.models import Permission
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.models import Assignment, AssignmentStatus, SetupEvent
from curation.benchmarks.mrb import scoring, scoring_input, scoring_output
from tests.factories import make_user, png_bytes

pytestmark = pytest.mark.django_db

ITEMS = [
    ("chart_1", "charts/qa"),
    ("chart_2", "charts/qa"),
    ("chat_3", "chat"),
    ("chat_4", "chat"),
]
SPLIT = {"chart_2"}


def client_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def upload(name: str, data: bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, data)


def dataset():
    records = [
        {
            "ID": ext_id,
            "Text": f"Question {ext_id}?",
            "Image": "images/0.png",
            "Output1": f"First answer to {ext_id}.",
            "Output2": f"Second answer to {ext_id}.",
            "Better": "Output1",
            "Category": category,
        }
        for ext_id, category in ITEMS
    ]
    images = io.BytesIO()
    with zipfile.ZipFile(images, "w") as zf:
        zf.writestr("images/0.png", png_bytes())
    return json.dumps(records).encode(), images.getvalue(), {r["Text"]: r for r in records}


def judge_all(client, by_prompt, *, dissent=False) -> int:
    judged = 0
    while True:
        r = client.post("/api/v1/projects/charts/assignments/next/")
        if r.status_code == 204:
            return judged
        assert r.status_code == 200, r.content
        a = r.json()
        record = by_prompt[a["prompt"]]
        first = "left" if a["left"] == record["Output1"] else "right"
        other = "right" if first == "left" else "left"
        pick = other if dissent and record["ID"] in SPLIT else first
        vote = {"choice": pick, "rationale": "compared"}
        if a["domain"]["kind"] == "correctness":
            vote.update(
                {f"correct_{pick}": "yes", f"correct_{other if pick == first else first}": "no"}
            )
        r = client.post(f"/api/v1/assignments/{a['id']}/judgement/", vote, format="json")
        assert r.status_code == 201, r.content
        judged += 1


def test_a_benchmark_from_nothing_through_the_api(django_capture_on_commit_callbacks):
    owner_user = make_user("owner")
    owner_user.user_permissions.add(Permission.objects.get(codename="add_project"))
    owner = client_for(owner_user)

    # The project, from the empty preset, and its two domains.
    r = owner.post(
        "/api/v1/projects/",
        {
            "name": "Charts",
            "slug": "charts",
            "preset": "empty",
            "votes_per_item": 3,
            "escalation_votes": 0,
            "guidelines": "Read the axes.",
        },
        format="json",
    )
    assert r.status_code == 201, r.content
    assert r.json()["archived"] is False
    r = owner.post(
        "/api/v1/projects/charts/domains/",
        {
            "slug": "charts",
            "title": "Charts",
            "export_category": "charts/qa",
            "kind": "correctness",
            "correctness_question": "Is the value read right?",
        },
        format="json",
    )
    assert r.status_code == 201, r.content
    r = owner.post(
        "/api/v1/projects/charts/domains/",
        {"slug": "chat", "title": "Chat", "export_category": "chat", "kind": "preference"},
        format="json",
    )
    assert r.status_code == 201, r.content
    dup = owner.post(
        "/api/v1/projects/charts/domains/",
        {"slug": "chat2", "title": "Chat", "export_category": "chat", "kind": "preference"},
        format="json",
    )
    assert dup.status_code == 400 and "export_category" in dup.json()["error"]["fields"]
    r = owner.patch("/api/v1/projects/charts/domains/chat/", {"title": "Open chat"}, format="json")
    assert r.status_code == 200 and r.json()["title"] == "Open chat"
    r = owner.patch("/api/v1/projects/charts/", {"lease_minutes": 10}, format="json")
    assert r.status_code == 200 and r.json()["lease_minutes"] == 10

    # The team: one curator added by username, four annotators by invitation.
    curator_user = make_user("cora")
    r = owner.post(
        "/api/v1/projects/charts/members/", {"username": "cora", "role": "curator"}, format="json"
    )
    assert r.status_code == 201 and r.json()["role"] == "curator"
    r = owner.post(
        "/api/v1/projects/charts/invitations/",
        {"role": "annotator", "max_uses": 4, "expires_in_days": 2, "note": "the team"},
        format="json",
    )
    assert r.status_code == 201, r.content
    token = r.json()["url"].rstrip("/").rsplit("/", 1)[1]
    annotators = []
    for n in range(4):
        user = make_user(f"ann{n}")
        client = client_for(user)
        joined = client.post("/api/v1/invitations/accept/", {"token": token}, format="json")
        assert joined.status_code == 200 and joined.json() == {
            "project": "charts",
            "role": "annotator",
        }
        annotators.append((user, client))
    fifth = client_for(make_user("late"))
    refused = fifth.post("/api/v1/invitations/accept/", {"token": token}, format="json")
    assert refused.status_code == 400
    listed = owner.get("/api/v1/projects/charts/invitations/").json()["results"]
    assert listed[0]["uses"] == 4 and listed[0]["state"] == "used" and "url" not in listed[0]

    # Import.
    data, images, by_prompt = dataset()
    r = owner.post(
        "/api/v1/projects/charts/imports/",
        {"dataset": upload("items.json", data), "images": upload("images.zip", images)},
        format="multipart",
    )
    assert r.status_code == 200 and r.json()["created"] == len(ITEMS), r.content

    # The fourth annotator takes an item and is deactivated: the lease returns.
    quitter, quitter_client = annotators.pop()
    held = quitter_client.post("/api/v1/projects/charts/assignments/next/").json()
    r = owner.patch(
        f"/api/v1/projects/charts/members/{quitter.pk}/", {"is_active": False}, format="json"
    )
    assert r.status_code == 200 and r.json()["is_active"] is False
    assert Assignment.objects.get(pk=held["id"]).status == AssignmentStatus.EXPIRED
    assert quitter_client.post("/api/v1/projects/charts/assignments/next/").status_code == 404

    for n, (_, client) in enumerate(annotators):
        assert judge_all(client, by_prompt, dissent=n == 2) == len(ITEMS)

    members = owner.get("/api/v1/projects/charts/members/").json()["results"]
    by_name = {m["username"]: m for m in members}
    assert by_name["ann0"]["judged"] == len(ITEMS)
    assert by_name["ann0"]["agreement_with_majority"] == 1.0
    assert by_name["ann2"]["agreement_with_majority"] == 0.75  # dissents on 1 of 4

    # Curation: resolve the split, release, score.
    curator = client_for(curator_user)
    r = curator.get("/api/v1/projects/charts/verdicts/", {"status": "contested"})
    contested = r.json()["results"]
    assert {v["external_id"] for v in contested} == SPLIT
    for v in contested:
        url = f"/api/v1/projects/charts/verdicts/{v['item_id']}/"
        detail = curator.get(url).json()
        r = curator.post(
            url + "decision/",
            {
                "action": "resolve",
                "choice": "1",
                "reason": "axis says so",
                "version": detail["version"],
            },
            format="json",
        )
        assert r.status_code == 200, r.content
    with django_capture_on_commit_callbacks(execute=True):
        r = curator.post("/api/v1/projects/charts/releases/", {"version": "v1"}, format="json")
    assert r.status_code == 202, r.content
    release_url = f"/api/v1/projects/charts/releases/{r.json()['id']}/"
    release = curator.get(release_url).json()
    assert release["status"] == "ready", release
    archive = b"".join(curator.get(release["download_url"]).streaming_content)
    with zipfile.ZipFile(io.BytesIO(archive)) as zf:
        name = next(n for n in zf.namelist() if n.endswith("/all_data.json"))
        records = json.loads(zf.read(name))
    assert sorted({rec["Category"] for rec in records}) == ["charts/qa", "chat"]
    lines = [
        json.dumps({"ID": rec["ID"], "Label": "A" if rec["Better"] == "Output1" else "B"})
        for rec in records
    ]
    predictions = "\n".join(lines).encode()
    r = curator.post(
        release_url + "evaluations/",
        {"name": "oracle", "predictions": upload("p.jsonl", predictions)},
        format="multipart",
    )
    assert r.status_code == 201, r.content
    expected = scoring_output.report_as_dict(
        scoring.score(
            records,
            scoring_input.parse_predictions(predictions.decode().split("\n"), filename="p.jsonl"),
        )
    )["official"]["groups"]
    assert r.json()["per_category"] == expected
    assert all(g["accuracy"] == 1.0 for g in expected)

    # Archive: read-only through the API too; and every step was audited.
    r = owner.patch("/api/v1/projects/charts/", {"archived": True}, format="json")
    assert r.status_code == 200 and r.json()["archived"] is True
    refused = owner.patch("/api/v1/projects/charts/", {"lease_minutes": 5}, format="json")
    assert refused.status_code == 400 and "archived" in refused.json()["error"]["message"]
    actions = set(SetupEvent.objects.values_list("action", flat=True))
    assert {
        "project_created",
        "domain_added",
        "domain_updated",
        "project_updated",
        "member_added",
        "invitation_created",
        "invitation_accepted",
        "member_deactivated",
        "project_archived",
    } <= actions
