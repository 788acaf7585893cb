"""A VideoRewardBench-style file end to end (issue 35 item 5): imported
through the one writer (the video a VIDEO part), decided, released in its
layout byte for byte with the videos byte for byte beside it, scored overall,
macro and per dimension (equal to a pandas computation) through the API,
with per-sample results, its leaderboard and a judge run that sends the video."""

from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
from django.conf import settings
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.importing.service import import_items_from_paths
from annotate.models import Item, ItemPart
from curation.benchmarks import registry
from curation.benchmarks.base import Upload
from curation.evaluation.media_content import MediaContent, MediaFiles, MediaOptions
from curation.models import Evaluation, ItemPrediction, ReleaseItem, Verdict
from curation.releases.build import build_release
from tests.annotate.importing import videorb_sets
from tests.curation.releases.test_releases import new_release
from tests.factories import make_member, make_project

pytestmark = pytest.mark.django_db
FILE = "videorb/videorewardbench.jsonl"


def decide(project, choice="1", **only):
    status = "resolved" if choice == "tie" else "agreed"
    Verdict.objects.filter(item__project=project, **only).update(
        status=status, final_choice=choice, provenance="majority"
    )


@pytest.fixture
def vrb_project(tmp_path):
    project = make_project(slug="vrb", seed=5)
    path = videorb_sets.write(tmp_path / "src", ensure_ascii=False)
    result = import_items_from_paths(project=project, dataset=path)
    assert result.created == len(videorb_sets.rows())
    decide(project)
    return project, path


def release_of(project, **kw):
    domains = list(
        project.domains.filter(slug__startswith="videorb-").values_list("slug", flat=True)
    )
    release = build_release(release_id=new_release(project, domains=domains, **kw).pk)
    assert release.status == "ready", release.error
    return release, Path(settings.MEDIA_ROOT) / release.folder


def reference(rows, scores):
    """Accuracy overall, per dimension and macro, computed by pandas."""
    frame = pd.DataFrame(
        {"dimension": [r["dimension"] for r in rows],
         "correct": [s is not None and s[0] > s[1] for s in scores]}
    )  # fmt: skip
    per = frame.groupby("dimension")["correct"].mean()
    return frame["correct"].mean(), per.to_dict(), per.mean()


def test_samples_are_video_items_by_dimension(vrb_project):
    project, _ = vrb_project
    item = Item.objects.get(project=project, external_id="vrb_0003")
    assert item.domain.export_category == "videorb/reasoning"
    parts = ItemPart.objects.filter(item=item, slot="prompt").order_by("position")
    assert [p.kind for p in parts] == ["video", "text"]
    assert parts[0].media.sha256 and parts[0].source_path == "videos/003.mp4"
    again = import_items_from_paths(project=project, dataset=vrb_project[1])
    assert again.created == 0


def test_release_is_byte_identical_with_its_videos(vrb_project):
    """Released though its items hold videos: this benchmark carries them."""
    project, source = vrb_project
    release, folder = release_of(project)
    assert (folder / FILE).read_bytes() == source.read_bytes()
    for row in videorb_sets.rows():
        assert (folder / "videorb" / row["video"]).read_bytes() == (
            source.parent / row["video"]).read_bytes()  # fmt: skip
    manifest = json.loads((folder / "manifest.json").read_text())
    section = manifest["videorb"]
    assert (section["samples"], section["videos"]) == (7, 6)
    assert section["dimensions"] == {"long_form_perception": 2, "short_form_perception": 2,
                                     "knowledge": 1, "reasoning": 1, "safety": 1}  # fmt: skip
    assert FILE in manifest["files"] and "videorb" in manifest["formats"]
    assert "VideoRewardBench-style" in (folder / "README.md").read_text()
    assert ReleaseItem.objects.filter(release=release).count() == 7


def test_each_sample_has_a_provenance_line_with_its_chosen_shown_first(vrb_project):
    project, _source = vrb_project
    decide(project, "2", item__external_id="vrb_0001")
    release, folder = release_of(project)
    lines = [json.loads(x) for x in (folder / "provenance.jsonl").read_text().splitlines()]
    mine = {line["ID"]: line for line in lines if "videorb" in line}
    assert len(mine) == 7
    one = mine["vrb_0001"]
    assert list(one) == ["ID", "Better", "chosen_canonical", "provenance", "votes", "videorb"]
    assert (one["Better"], one["chosen_canonical"], one["provenance"]) == ("A", "2", "majority")
    row = videorb_sets.rows()[1]
    assert one["videorb"] == {"file": FILE, "dimension": row["dimension"], "video": row["video"]}
    better = ReleaseItem.objects.filter(release=release).values_list("better", "chosen")
    assert sorted(set(better)) == [("A", "1"), ("A", "2")]


def test_a_decision_for_the_rejected_trades_its_line_and_a_tie_is_left_out(vrb_project):
    project, source = vrb_project
    decide(project, "2", item__external_id="vrb_0001")
    decide(project, "tie", item__external_id="vrb_0004")
    _release, folder = release_of(project)
    lines = (folder / FILE).read_text(encoding="utf-8").splitlines()
    originals = source.read_text(encoding="utf-8").splitlines()
    assert lines == [originals[0], lines[1], *originals[2:4], *originals[5:]]
    new, old = json.loads(lines[1]), json.loads(originals[1])
    assert (new["chosen"], new["rejected"]) == (old["rejected"], old["chosen"])
    assert list(new) == list(old)


def test_scored_overall_macro_and_per_dimension_as_pandas_computes(vrb_project, client):
    project, _ = vrb_project
    release, _folder = release_of(project)
    rows = videorb_sets.rows()
    scores = [(1.0, 0.0), (0.2, 0.9), (3, 3), (2.5, -1), (0, 1), (1, 0.5), None]
    lines = [{"id": r["id"], "chosen_score": s[0], "rejected_score": s[1]}
             for r, s in zip(rows, scores, strict=True) if s is not None]  # fmt: skip
    lines.append({"id": "not-in-release", "chosen_score": 1, "rejected_score": 0})
    body = "".join(json.dumps(x) + "\n" for x in lines)
    assert registry.detect(body) is registry.get("videorb")
    overall, per, macro = reference(rows, scores)
    curator = make_member(project, role="curator")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=curator).key}")
    url = f"/api/v1/projects/{project.slug}/releases/{release.pk}/evaluations/"
    r = api.post(url, {"name": "rm-1", "predictions": io.BytesIO(body.encode())},
                 format="multipart")  # fmt: skip
    assert r.status_code == 201, r.content
    assert r.json()["accuracy"] == pytest.approx(overall, abs=1e-9)
    evaluation = Evaluation.objects.get(release=release, name="rm-1")
    report = evaluation.report["videorb"]
    assert report["macro_accuracy"] == pytest.approx(macro, abs=1e-9)
    by_dimension = {d["dimension"]: d["accuracy"] for d in report["dimensions"]}
    assert by_dimension == pytest.approx(per, abs=1e-9)
    assert (report["missing"], report["unknown_ids"]) == (1, 1)
    assert api.get(f"{url}{evaluation.pk}/").json()["videorb"]["correct"] == report["correct"]
    preds = ItemPrediction.objects.filter(evaluation=evaluation)
    assert preds.count() == 6
    assert (preds.get(external_id="2").choice, preds.get(external_id="2").correct) == ("", False)
    assert preds.get(external_id="vrb_0001").choice == "2"
    annotator = make_member(project, role="annotator")
    annotator_api = APIClient()
    annotator_api.force_authenticate(annotator)
    assert annotator_api.get(url).status_code in (403, 404)

    client.force_login(curator)
    html = client.get(reverse("leaderboard", args=[project.slug, release.pk])).content.decode()
    assert "videorb-leaderboard" in html and 'data-name="rm-1"' in html and "Macro %" in html
    entry = reverse("entry_items", args=[project.slug, release.pk, evaluation.pk])
    assert client.get(entry).status_code == 200
    client.force_login(make_member(make_project(slug="other"), role="curator"))
    assert client.get(entry).status_code == 404


def test_bad_predictions_are_refused_naming_line_and_field(vrb_project):
    from curation.benchmarks.base import EvaluationError

    project, _ = vrb_project
    release, _folder = release_of(project)
    benchmark = registry.get("videorb")
    bad = b'{"id": "vrb_0000", "chosen_score": 1, "rejected_score": 0}\n{"id": "vrb_0000", ' \
          b'"chosen_score": 1, "rejected_score": "x"}\n'  # fmt: skip
    with pytest.raises(EvaluationError, match=r"p.jsonl:2, field 'rejected_score'"):
        benchmark.score(release, Upload(bad, "p.jsonl"))
    twice = b'{"id": 2, "chosen_score": 1, "rejected_score": 0}\n' * 2
    with pytest.raises(EvaluationError, match=r"p.jsonl:2, field 'id': '2' is predicted twice"):
        benchmark.score(release, Upload(twice, "p.jsonl"))


def test_a_rekeyed_release_hides_the_ids_and_still_scores(vrb_project):
    project, _ = vrb_project
    release, folder = release_of(project, rekey=True)
    ids = [json.loads(x)["id"] for x in (folder / FILE).read_text().splitlines()]
    assert all(i.startswith("vrb_") and len(i) == 20 for i in ids) and ids == sorted(ids)
    assert "vrb_0003" not in (folder / FILE).read_text()
    body = "".join(json.dumps({"id": i, "chosen_score": 1, "rejected_score": 0}) + "\n"
                   for i in ids).encode()  # fmt: skip
    scored = registry.get("videorb").score(release, Upload(body, "p.jsonl"))
    assert scored.accuracy == 1.0
    evaluation = Evaluation.objects.create(release=release, name="e", scoring="videorb",
                                           report=scored.report, accuracy=1.0)  # fmt: skip
    assert scored.store_items(evaluation) == len(ids)


def test_a_judge_run_sends_the_video_in_both_orders(vrb_project):
    project, _ = vrb_project
    release, folder = release_of(project)
    benchmark = registry.get("videorb")
    assert benchmark.judge_both_orders
    records = benchmark.judge_records(release)
    assert benchmark.judge_item_count(release) == len(records) == 7
    endpoint = SimpleNamespace(model="m", max_tokens=32, temperature=None)
    read = []

    def read_file(name):
        read.append(name)
        return (folder / name).read_bytes()

    body = benchmark.judge_request(records[0], read_file, endpoint, swapped=True)
    content = body["messages"][0]["content"]
    assert read == ["videorb/videos/000.mp4"]
    assert "[Answer A]\nA worse answer to 0." in content[0]["text"]
    # The video as every judge sends one: the run's frames by default ...
    assert content[1]["text"].startswith("Video, ") and len(content) > 3
    assert content[2]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    # ... or one video part for an endpoint that takes video.
    as_video = MediaFiles(read_file, MediaContent(MediaOptions(video_as="video")))
    content = benchmark.judge_request(records[0], as_video, endpoint, swapped=False)
    content = content["messages"][0]["content"]
    assert [part["type"] for part in content] == ["text", "video_url"]
    assert content[1]["video_url"]["url"].startswith("data:video/mp4;base64,")
    outputs = {}
    for r in records:
        outputs[(r["ID"], "original")] = "[[A]]"
        outputs[(r["ID"], "swapped")] = "[[A]]" if r is records[0] else "[[B]]"
    upload = benchmark.judge_predictions(outputs, records, SimpleNamespace(pk=7))
    report = benchmark.score(release, upload).report["videorb"]
    assert report["correct"] == len(records) - 1


def test_an_annotator_can_play_the_prompts_video(tmp_path, client):
    """The compare page's transport drives responses only: a prompt's video
    has its own controls."""
    project = make_project(slug="vrb-play", seed=5)
    import_items_from_paths(project=project, dataset=videorb_sets.write(tmp_path))
    client.force_login(make_member(project, role="annotator"))
    page = client.post(reverse("work_start", args=[project.slug]), follow=True)
    html = page.content.decode()
    assert page.status_code == 200 and '<video class="clip"' in html
    prompt = html[html.index('<div class="prompt">') :]
    video = prompt[prompt.index("<video") : prompt.index("</video>")]
    assert " controls" in video and "/media/" in video


def test_the_evaluate_command_scores_a_release_folder(vrb_project, tmp_path):
    from django.core.management import call_command

    project, _ = vrb_project
    release, folder = release_of(project)
    lines = [{"id": r["id"], "chosen_score": 1, "rejected_score": n % 2}
             for n, r in enumerate(videorb_sets.rows())]  # fmt: skip
    predictions = tmp_path / "preds.jsonl"
    predictions.write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = io.StringIO()
    call_command("evaluate", str(folder), str(predictions), "--json", stdout=out)
    report = json.loads(out.getvalue())["videorb"]
    uploaded = registry.get("videorb").score(release, Upload(predictions.read_bytes(), "p"))
    assert report == {k: v for k, v in uploaded.report["videorb"].items() if k != "items"}
    assert report["correct"] == 4
    text = io.StringIO()
    call_command("evaluate", str(folder), str(predictions), "--format", "videorb", stdout=text)
    assert "overall" in text.getvalue() and "macro" in text.getvalue()


def test_an_item_not_imported_from_such_a_file_gets_a_new_line(vrb_project):
    """A video question made elsewhere, in a VideoRewardBench domain: a new
    line, its video under videos/<sha256>, its dimension its domain's."""
    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage

    from annotate.models import media_part, text_part, write_item_content
    from tests.factories import make_item, make_media

    project, source = vrb_project
    data = videorb_sets.clip(1)
    asset = make_media("video", size_bytes=len(data))
    default_storage.save(asset.file, ContentFile(data))
    domain = project.domains.get(export_category="videorb/knowledge")
    item = make_item(project=project, domain=domain, image=None, external_id="own-1")
    write_item_content(item, [media_part(asset), text_part("Which colour?")],
                       [[text_part("Blue.")], [text_part("Red.")]])  # fmt: skip
    Verdict.objects.create(item=item, project=project, status="agreed", final_choice="2",
                           provenance="majority")  # fmt: skip
    _release, folder = release_of(project)
    lines = (folder / FILE).read_text(encoding="utf-8").splitlines()
    assert lines[:-1] == source.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[-1]) == {
        "id": "own-1", "video": f"videos/{asset.sha256}.mp4", "prompt": "Which colour?",
        "chosen": "Red.", "rejected": "Blue.", "dimension": "knowledge",
    }  # fmt: skip
    assert (folder / "videorb" / "videos" / f"{asset.sha256}.mp4").read_bytes() == data
