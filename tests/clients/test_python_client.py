"""The Python client (clients/python, import name triplet_client) against a
live server: the README's ten steps from a notebook's point of view, then the
errors and pages it must turn into Python."""

import hashlib
import io
import json
import zipfile
from collections import Counter

import pytest
from rest_framework.authtoken.models import Token

# Installed by `make install` (pip install -e "clients/python[pandas,datasets]").
from triplet_client import (
    BadRequest,
    Client,
    Conflict,
    ImportFailed,
    NotAuthenticated,
    NotFound,
    PermissionDenied,
)

from annotate.models import Item
from curation.benchmarks.mrb import scoring, scoring_input, scoring_output
from curation.models import Release
from tests.annotate.importing.public_sets import VL_DOMAIN_MAP, VL_REPEATED_IDS, vl_rewardbench
from tests.curation.releases.test_shared_configs import elsewhere, load  # noqa: F401
from tests.factories import make_user, png_bytes

pytestmark = pytest.mark.django_db(transaction=True)

# (ID, Category): the ID prefixes exercise the official sub-buckets; the last
# goes to a domain the script adds itself.
ITEMS = [
    ("mathvista_1", "reasoning"),
    ("math_2", "reasoning"),
    ("code_3", "reasoning"),
    ("pairs_4", "safety"),
    ("tox_5", "safety"),
    ("vqa_6", "vqa"),
    ("know_7", "knowledge"),
    ("gp_8", "open_generation/preference_task"),
    ("gc_9", "open_generation/correctness_task"),
    ("chart_10", "charts/reading"),
]
# The third annotator dissents on these: contested, then resolved for response 2.
SPLIT = {"math_2", "pairs_4", "chart_10"}


def mrb_files() -> tuple[bytes, bytes, dict[str, dict]]:
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
    return json.dumps(records).encode(), images.getvalue(), {r["Text"]: r for r in records}


def client_for(live_server, user) -> Client:
    return Client(live_server.url, token=Token.objects.get_or_create(user=user)[0].key)


def vote_for(a, by_prompt: dict, *, dissent: bool) -> dict:
    """The script knows the dataset: it finds Output1 among the displayed sides."""
    record = by_prompt[a.prompt]
    output1 = "left" if a.left == record["Output1"] else "right"
    other = "right" if output1 == "left" else "left"
    pick = other if dissent and record["ID"] in SPLIT else output1
    vote = {"choice": pick, "rationale": "compared both"}
    if a.asks_correctness:
        vote.update(
            {f"correct_{pick}": "yes", f"correct_{'left' if pick == 'right' else 'right'}": "no"}
        )
    return vote


def annotate_everything(studio: Client, slug: str, by_prompt: dict, *, dissent: bool) -> int:
    """One annotator's notebook loop: judge until nothing is left."""
    judged = 0
    for a in studio.assignments(slug):
        vote = vote_for(a, by_prompt, dissent=dissent)
        result = studio.judge(a, **vote)
        assert (result.assignment, result.choice, result.already_submitted) == (
            a.id,
            vote["choice"],
            False,
        )
        assert studio.judge(a, **vote).already_submitted  # idempotent
        judged += 1
    return judged


def annotate_in_one_round_trip_each(studio: Client, slug: str, by_prompt: dict) -> int:
    """The same with judge(next=True): each vote brings the next item."""
    judged, a = 0, studio.claim_next(slug).assignment
    while a is not None:
        result = studio.judge(a, next=True, **vote_for(a, by_prompt, dissent=False))
        judged += 1
        a = result.next
    assert result.more_may_come is False
    return judged


def test_a_notebook_runs_the_readme_steps_through_the_client(live_server, tmp_path, elsewhere):  # noqa: F811
    boss = make_user("boss", is_superuser=True, is_staff=True)
    studio = client_for(live_server, boss)

    # 1-2. A project with the MRB domains, and one domain of our own.
    project = studio.create_project("Client study", "cli", votes_per_item=3, escalation_votes=0)
    assert (project.slug, project.role, project.votes_per_item) == ("cli", "admin", 3)
    charts = studio.add_domain(project, "charts", "Charts", "charts/reading", kind="correctness")
    assert charts.kind == "correctness"
    assert [d.slug for d in studio.domains("cli")][-1] == "charts"
    assert [p.slug for p in studio.projects()] == ["cli"]
    assert studio.project("cli").archived is False

    # 3. A broken file is refused with every problem named; nothing is written.
    data, images, by_prompt = mrb_files()
    broken = json.loads(data)
    del broken[1]["Output2"]
    with pytest.raises(ImportFailed) as refused:
        studio.import_items("cli", ("broken.json", json.dumps(broken).encode()), ("i.zip", images))
    assert refused.value.status == 400 and refused.value.code == "import_failed"
    problem = next(p for p in refused.value.problems if p.field == "Output2")
    assert problem.file.endswith("broken.json") and problem.index is not None
    assert "Output2" in str(refused.value)
    assert not Item.objects.filter(project__slug="cli").exists()

    (tmp_path / "all_data.json").write_bytes(data)
    (tmp_path / "images.zip").write_bytes(images)
    seen: list[tuple[int, int | None]] = []
    result = studio.import_items(
        "cli",
        tmp_path / "all_data.json",
        str(tmp_path / "images.zip"),
        on_progress=lambda done, total: seen.append((done, total)),
    )
    assert (result.format, result.created, result.images_stored) == ("mrb", len(ITEMS), 2)
    assert seen[-1] == (len(data) + len(images),) * 2
    again = studio.import_items("cli", ("all_data.json", data), ("images.zip", images))
    assert (again.created, again.unchanged) == (0, len(ITEMS))

    # 4-6. Invitations and members.
    annotators = [make_user(name) for name in ("ann1", "ann2", "ann3")]
    invitation = studio.invite("cli", "annotator", max_uses=1, note="for ann1")
    assert invitation.url and invitation.state == "open" and invitation.uses == 0
    joined = client_for(live_server, annotators[0]).accept_invitation(invitation.url)
    assert (joined.project, joined.role) == ("cli", "annotator")
    assert [i.uses for i in studio.invitations("cli")] == [1]
    for name in ("ann2", "ann3"):
        assert studio.add_member("cli", name).role == "annotator"
    curator_user = make_user("cur")
    studio.add_member("cli", "cur", role="curator")
    roles = {m.username: m.role for m in studio.members("cli")}
    assert roles == {
        "boss": "admin",
        "ann1": "annotator",
        "ann2": "annotator",
        "ann3": "annotator",
        "cur": "curator",
    }

    # 7. Three annotators judge everything; the third dissents on SPLIT.
    first_annotator = client_for(live_server, annotators[0])
    assert annotate_in_one_round_trip_each(first_annotator, "cli", by_prompt) == len(ITEMS)
    for n, user in enumerate(annotators[1:], start=1):
        annotator = client_for(live_server, user)
        assert annotate_everything(annotator, "cli", by_prompt, dissent=n == 2) == len(ITEMS)
        assert annotator.claim_next("cli").done

    # 8. The curator resolves the contested items; a stale decision is a Conflict.
    curator = client_for(live_server, curator_user)
    contested = list(curator.verdicts("cli", status="contested"))
    assert {v.external_id for v in contested} == SPLIT
    assert all((v.votes.response_1, v.votes.response_2) == (2, 1) for v in contested)
    for v in contested:
        detail = curator.verdict("cli", v.item_id)
        assert len(detail.current_votes or []) == 3
        resolved = curator.decide("cli", detail, "resolve", "the second is right", choice="2")
        assert (resolved.status, resolved.final_choice) == ("resolved", "2")
        with pytest.raises(Conflict) as stale:
            curator.decide("cli", detail, "resolve", "changed my mind", choice="1")
        assert stale.value.code == "stale"

    # The data grid's rows with its filters.
    rows = list(curator.items("cli", sort="-external_id"))
    assert [r.external_id for r in rows] == sorted((i for i, _ in ITEMS), reverse=True)
    assert all(r.thumbnail and r.votes_needed == 3 for r in rows)
    split = list(curator.items("cli", agreement_max=0.7, sort="external_id"))
    assert [r.external_id for r in split] == sorted(SPLIT)
    assert {(r.status, r.votes.response_1, r.votes.response_2) for r in split} == {
        ("resolved", 2, 1)
    }
    assert [r.external_id for r in curator.items("cli", domain="charts", flagged=False)] == [
        "chart_10"
    ]
    with pytest.raises(BadRequest) as bad_filter:
        list(curator.items("cli", status="bogus"))
    assert "status" in bad_filter.value.fields

    # Votes and verdicts as DataFrames (and as a datasets.Dataset).
    votes = curator.export_votes("cli").to_pandas()
    assert len(votes) == 3 * len(ITEMS)
    assert votes.groupby("item")["annotator"].nunique().eq(3).all()
    dissent = votes[votes["item"].isin(SPLIT)].groupby("item")["choice"].apply(sorted)
    assert all(choices == ["1", "1", "2"] for choices in dissent)
    assert votes["strength"].isna().all()  # A/B votes: nullable, not NaN floats
    assert str(votes["submitted_at"].dt.tz) == "UTC"
    verdicts = curator.export_verdicts("cli").to_pandas()
    assert verdicts.set_index("item")["status"].to_dict() == {
        ext_id: "resolved" if ext_id in SPLIT else "agreed" for ext_id, _ in ITEMS
    }
    dataset = curator.export_votes("cli", domain="reasoning").to_dataset()
    assert dataset.num_rows == 9 and "rationale" in dataset.column_names

    # 9. A release: cut, watched until ready, downloaded and unpacked.
    release = curator.create_release("cli", "v1.0", notes="first cut")
    assert release.version == "v1.0" and release.project == "cli"
    updates = []
    ready = curator.wait_for_release("cli", release, on_progress=updates.append, timeout=60)
    assert ready.status == "ready" and updates[-1] == ready
    assert (ready.progress.done, ready.progress.total) == (len(ITEMS), len(ITEMS))
    with pytest.raises(Conflict):
        curator.create_release("cli", "v1.0")
    folder = curator.download_release("cli", ready, tmp_path / "releases")
    archive = next((tmp_path / "releases").glob("*.zip"))
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == ready.sha256
    assert ready.sha256 == Release.objects.get(pk=ready.id).sha256
    records = json.loads((folder / "all_data.json").read_text())
    assert {r["ID"] for r in records} == {ext_id for ext_id, _ in ITEMS}
    assert [r.id for r in curator.releases("cli")] == [ready.id]

    # The downloaded release loads with `datasets` by its card's config names
    # (default: the benchmark records; trl: preference rows), from elsewhere.
    by_id = {r["ID"]: r for r in records}
    default = load(folder, elsewhere, "default", split="train")
    assert sorted(default["ID"]) == sorted(by_id)
    assert all(row["Better"] == by_id[row["ID"]]["Better"] for row in default)
    pairs = load(folder, elsewhere, "trl", split="train")
    assert sorted(pairs["id"]) == sorted(by_id)
    for row in pairs:
        record = by_id[row["id"]]
        worse = "Output2" if record["Better"] == "Output1" else "Output1"
        assert row["chosen"] == [{"role": "assistant", "content": record[record["Better"]]}]
        assert row["rejected"] == [{"role": "assistant", "content": record[worse]}]

    # 10. Predictions scored as the official scorer does; the leaderboard.
    lines = []
    for n, rec in enumerate(records):
        right = "A" if rec["Better"] == "Output1" else "B"
        wrong = "B" if right == "A" else "A"
        lines.append(json.dumps({"ID": rec["ID"], "output": f"[[{wrong if n == 1 else right}]]"}))
    predictions = "\n".join(lines).encode()
    entry = curator.evaluate("cli", ready, "judge-1", ("preds.jsonl", predictions))
    expected = scoring_output.report_as_dict(
        scoring.score(
            records,
            scoring_input.parse_predictions(
                predictions.decode().split("\n"), filename="preds.jsonl"
            ),
        )
    )["official"]["groups"]
    assert [g.__dict__ for g in entry.per_category] == expected
    assert entry.accuracy == pytest.approx((len(ITEMS) - 1) / len(ITEMS), abs=1e-12)
    assert [e.name for e in curator.leaderboard("cli", ready)] == ["judge-1"]
    assert curator.evaluation("cli", ready, entry).per_category == entry.per_category


def test_the_published_vl_rewardbench_file_imports_in_one_call(live_server):
    """The first hour's import from a notebook: the published VL-RewardBench
    JSONL (chosen/rejected, no category, repeated IDs) with its images, in one
    call, the options as Python values; the grid's rows show where each went."""
    studio = client_for(live_server, make_user("boss", is_superuser=True))
    studio.create_project("VL relabel", "vl")
    vl = vl_rewardbench()
    domains = dict(pair.split("=") for pair in VL_DOMAIN_MAP.split(","))
    result = studio.import_items(
        "vl",
        ("vl_rewardbench.jsonl", vl.jsonl()),
        ("images.zip", vl.images_zip()),
        domain_from="id-prefix",
        domain_map=domains,
        duplicates="suffix",
    )
    assert (result.format, result.created, result.duplicates_renamed, result.images_stored) == (
        "pairs",
        len(vl.rows),
        VL_REPEATED_IDS,
        len(vl.images),
    )
    longest_first = sorted(domains.items(), key=lambda kv: -len(kv[0]))
    expected = Counter(
        next(domain for prefix, domain in longest_first if row["id"].startswith(prefix))
        for row in vl.rows
    )
    rows = list(studio.items("vl"))
    assert Counter(r.domain for r in rows) == expected
    assert sum(r.external_id.endswith("#2") for r in rows) == VL_REPEATED_IDS
    assert {r.status for r in rows} == {"needs_votes"}


def test_refusals_are_typed_exceptions_and_lists_come_whole(live_server, monkeypatch):
    owner = make_user("owner", is_superuser=True)
    studio = client_for(live_server, owner)
    studio.create_project("Errors", "err")
    annotator = make_user("just-an-annotator")
    studio.add_member("err", annotator.username)
    as_annotator = client_for(live_server, annotator)

    with pytest.raises(NotAuthenticated) as anonymous:
        list(Client(live_server.url, token="not-a-token").projects())
    assert anonymous.value.status == 401
    with pytest.raises(NotFound) as missing:
        studio.project("no-such-project")
    assert (missing.value.status, missing.value.code) == (404, "not_found")
    with pytest.raises(PermissionDenied):
        as_annotator.create_release("err", "v1")
    with pytest.raises(PermissionDenied):
        as_annotator.export_votes("err")
    with pytest.raises(BadRequest) as invalid:
        studio.add_domain("err", "x", "X", "x", kind="neither")
    assert invalid.value.code == "validation_error" and "kind" in invalid.value.fields
    with pytest.raises(BadRequest) as empty:
        studio.create_release("err", "v1")
    assert empty.value.code == "nothing_to_release"

    # Settings, domains, members and invitations change through the client.
    assert studio.update_project("err", guidelines="Look closely.").guidelines == "Look closely."
    assert studio.update_project("err", archived=True).archived is True
    assert studio.update_project("err", archived=False).archived is False
    assert studio.update_domain("err", "vqa", title="Visual QA").title == "Visual QA"
    changed = studio.update_member("err", annotator.pk, role="curator")
    assert (changed.username, changed.role, changed.is_active) == (
        annotator.username,
        "curator",
        True,
    )
    assert studio.update_member("err", annotator.pk, is_active=False).is_active is False
    studio.remove_member("err", annotator.pk)
    assert [m.username for m in studio.members("err")] == ["owner"]
    link = studio.invite("err", "curator", max_uses=None, expires_in_days=2)
    assert link.token and link.url.endswith(f"/join/{link.token}/")
    studio.revoke_invitation("err", link.id)
    assert [i.state for i in studio.invitations("err")] == ["revoked"]
    with pytest.raises(BadRequest) as revoked:
        as_annotator.accept_invitation(link.token)
    assert revoked.value.code == "invitation_invalid"

    # Pages are followed to the end (six MRB domains, three a page).
    monkeypatch.setattr("triplet_client.transport.PAGE_SIZE", 3)
    assert len(studio.domains("err")) == 6
    assert [p.slug for p in studio.projects()] == ["err"]
