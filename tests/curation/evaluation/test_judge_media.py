"""Judges get videos and sounds through one seam (issue 35 item 4,
curation.evaluation.media_content): a video as N frames at moments drawn
from the run's seed (or as one video_url part), audio as input_audio with
its format; the same bytes again for the same seed, both orders from one
decode."""

from __future__ import annotations

import base64
import io
import json
import threading
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from PIL import Image

from curation.benchmarks.mmrb2 import judge as mmrb2_judge
from curation.benchmarks.omni import judge as omni_judge
from curation.benchmarks.omni.benchmark import records_of
from curation.evaluation.media_content import (
    JITTER,
    MAX_FRAMES,
    MediaContent,
    MediaFiles,
    MediaOptions,
    MediaUnreadable,
    frame_times,
    media_parts,
)


@cache
def clip(colour=(40, 110, 200)) -> bytes:
    from demo import clips

    return clips.video_bytes(seconds=2, width=640, height=360, fps=10, colour=colour)


@cache
def sound(container="wav") -> bytes:
    from demo import clips

    return clips.audio_bytes(seconds=1, container=container)


def files(**options):
    data = {"v/1.mp4": clip(), "v/2.mp4": clip((200, 60, 40)), "a/1.wav": sound(),
            "a/2.mp3": sound("mp3")}  # fmt: skip
    data.update({f"{omni_judge.MEDIA_FOLDER}/{name}": value for name, value in data.items()})
    return MediaFiles(data.__getitem__, MediaContent(MediaOptions(**options)))


def jpeg(part) -> Image.Image:
    url = part["image_url"]["url"]
    assert url.startswith("data:image/jpeg;base64,")
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))


def video_record(**fields):
    value = {"id": 1, "prompt": "Film a wave", "response1": "v/1.mp4", "response2": "v/2.mp4",
             "model1": "m1", "model2": "m2", "criteria": "Smooth motion.",
             "criteria_preference": "response1", **fields}  # fmt: skip
    (record,) = records_of("text_to_video", json.dumps([value], indent=4))
    return record


ENDPOINT = type("Endpoint", (), {"model": "judge", "max_tokens": 64, "temperature": None})()


def test_a_video_goes_as_n_frames_after_a_line_saying_when_each_no_larger_than_the_max_side():
    parts = media_parts(files(video_frames=5, max_side=200), "v/1.mp4", "video")
    assert len(parts) == 6 and parts[0]["type"] == "text"
    assert parts[0]["text"].startswith("Video, 5 frames at t=") and parts[0]["text"].endswith("s")
    times = [float(t.rstrip("s")) for t in parts[0]["text"].split("t=", 1)[1].split(", ")]
    assert times == sorted(times) and times[0] >= 0 and times[-1] < 2.0
    for part in parts[1:]:
        assert part["type"] == "image_url"
        assert jpeg(part).size == (200, 112)  # 640x360 scaled to a longest side of 200


def test_frame_positions_are_spread_evenly_with_a_seeded_jitter():
    times = frame_times(8.0, 4, seed=1, sha256="a" * 64)
    for k, t in enumerate(times):  # each in its slot, at most JITTER of a slot off the middle
        assert abs(t - (k + 0.5) * 2.0) <= JITTER * 2.0 + 1e-9
    assert frame_times(8.0, 4, seed=1, sha256="a" * 64) == times
    assert frame_times(8.0, 4, seed=2, sha256="a" * 64) != times
    assert frame_times(8.0, 4, seed=1, sha256="b" * 64) != times


def test_the_same_seed_sends_identical_request_bytes_and_another_seed_other_moments():
    record = video_record()

    def body(seed):  # a fresh run's reader each time: nothing shared but the seed
        sent = omni_judge.request_body(record, files(seed=seed, video_frames=4), ENDPOINT,
                                       with_ties=False)  # fmt: skip
        return json.dumps(sent, sort_keys=True).encode()

    first = body(11)
    assert body(11) == first
    other = json.loads(body(12))["messages"][1]["content"]
    lines = [p["text"] for p in json.loads(first)["messages"][1]["content"] if p["type"] == "text"]
    other_lines = [p["text"] for p in other if p["type"] == "text"]
    assert [x for x in lines if x.startswith("Video")] != [
        x for x in other_lines if x.startswith("Video")
    ]
    content = json.loads(first)["messages"][1]["content"]
    assert [p["type"] for p in content].count("image_url") == 8  # 4 frames of each response
    assert "video_url" not in [p["type"] for p in content]


def test_video_as_video_sends_the_file_as_one_video_url():
    content = omni_judge.content(video_record(), files(video_as="video"))
    urls = [p["video_url"]["url"] for p in content if p["type"] == "video_url"]
    expected = [clip(), clip((200, 60, 40))]
    assert urls == [f"data:video/mp4;base64,{base64.b64encode(b).decode()}" for b in expected]
    assert "image_url" not in [p["type"] for p in content]


@pytest.mark.parametrize(("name", "container"), [("a/1.wav", "wav"), ("a/2.mp3", "mp3")])
def test_audio_goes_as_input_audio_with_its_format(name, container):
    (part,) = media_parts(files(), name, "audio")
    assert part["type"] == "input_audio"
    assert part["input_audio"]["format"] == container
    assert base64.b64decode(part["input_audio"]["data"]) == sound(container)


def test_both_orders_show_the_same_frames_swapped_from_one_decode_per_clip():
    pair = {
        "prompt_content": [("text", "Which clip is smoother?")],
        "response_a": {"response_content": [("video", "v/1.mp4")]},
        "response_b": {"response_content": [("video", "v/2.mp4"), ("audio", "a/1.wav")]},
    }
    reader = files(seed=3, video_frames=3)
    forward = mmrb2_judge.content_list(pair, "t2i", reader, direction="forward")
    reverse = mmrb2_judge.content_list(pair, "t2i", reader, direction="reverse")

    def sides(content):
        at = [p.get("text") for p in content]
        a, b = at.index("[RESPONSE A:]"), at.index("[RESPONSE B:]")
        return content[a + 1 : b], content[b + 1 :]

    (fa, fb), (ra, rb) = sides(forward), sides(reverse)
    assert fa == rb and fb == ra
    assert [p["type"] for p in fa] == ["text", "image_url", "image_url", "image_url"]
    assert [p["type"] for p in fb][-1] == "input_audio"
    assert reader.content.decodes == 2  # each clip decoded once for both orders


def test_threads_asking_for_one_clip_at_once_decode_it_once():
    reader = files(video_frames=6)
    got = []
    threads = [
        threading.Thread(target=lambda: got.append(reader.parts("v/1.mp4", "video")))
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 4 and all(g == got[0] for g in got)
    assert reader.content.decodes == 1


def test_frames_are_bounded_and_an_undecodable_video_is_a_failed_read():
    with pytest.raises(ValueError):
        MediaOptions(video_frames=MAX_FRAMES + 1)
    with pytest.raises(ValueError):
        MediaOptions(video_frames=0)
    with pytest.raises(ValueError):
        MediaOptions(video_as="gif")
    broken = MediaFiles({"v/x.mp4": clip()[:400]}.__getitem__, MediaContent())
    with pytest.raises(MediaUnreadable) as raised:  # an OSError: the runner stores the call failed
        broken.parts("v/x.mp4", "video")
    assert isinstance(raised.value, OSError) and raised.value.filename == "v/x.mp4"


# --- a judge run over a release with clips --------------------------------------------------


class RecordingJudge:
    """An OpenAI-compatible endpoint on 127.0.0.1 that keeps every request body
    and answers "[[A]]"."""

    def __init__(self):
        self.bodies: list[bytes] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                fake.bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
                data = json.dumps({"choices": [{"message": {"content": "So: [[A]]"}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def omni_media_release(tmp_path, task):
    from annotate.importing.service import import_items_from_paths
    from annotate.models import Item
    from curation.models import Verdict
    from tests.annotate.importing.test_omni_format import media_records
    from tests.curation.benchmarks.omni.test_omni_end_to_end import release_of
    from tests.factories import make_project

    project = make_project(slug=f"omni-{task.replace('_', '-')}", seed=3)
    values, clips = media_records(task)
    for name, data in clips.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    path = tmp_path / f"{task}_preferences.json"
    path.write_text(json.dumps(values, indent=4), encoding="utf-8")
    assert import_items_from_paths(project=project, dataset=path).created == 2
    for item in Item.objects.filter(project=project):
        choice = item.gold_choice or "tie"
        Verdict.objects.filter(pk=item.verdict.pk).update(
            status="agreed" if choice != "tie" else "resolved", final_choice=choice,
            provenance="majority")  # fmt: skip
    release, _folder = release_of(project)
    return release


def judge_run(release, fake, **options):
    from curation.evaluation.judge_runs import run_judge, save_endpoint, start_judge_run
    from tests.factories import make_member

    endpoint = save_endpoint(project=release.project, actor=make_member(release.project,
                             role="admin"), name="fake", base_url=fake.base_url, model="judge",
                             temperature=None, max_tokens=64, timeout_seconds=5.0)  # fmt: skip
    run = start_judge_run(release=release, endpoint=endpoint, name="media judge", swapped=False,
                          concurrency=2, user=None, enqueue=False, **options)  # fmt: skip
    return run_judge(run_id=run.pk)


@pytest.mark.django_db
def test_a_video_release_is_judged_as_frames_and_a_resumed_run_sends_the_same_bytes(tmp_path):
    from pathlib import Path

    from django.conf import settings

    from curation.benchmarks import registry
    from curation.evaluation import judge_runs

    release = omni_media_release(tmp_path, "text_video_to_text")
    with RecordingJudge() as fake:
        run = judge_run(release, fake, video_frames=3)
    assert run.status == "complete", run.error
    assert (run.video_as, run.video_frames) == ("frames", 3)
    (sent,) = fake.bodies  # one judged record (the tie is not judged without ties)
    content = json.loads(sent)["messages"][1]["content"]
    assert [p["type"] for p in content].count("image_url") == 3
    assert any(p.get("text", "").startswith("Video, 3 frames at t=") for p in content)
    # A resumed run builds its requests again from the release and the seed: same bytes.
    records, reader = judge_runs.judge_inputs(run)
    endpoint = judge_runs._client_endpoint(run)
    again = judge_runs.request_body(run, records[0], reader, endpoint, "original")
    body = registry.get(run.scoring).judge_request(records[0], reader, endpoint, swapped=False)
    assert again == body == json.loads(sent)
    # The predictions file says how its videos went.
    stored = (Path(settings.MEDIA_ROOT) / run.evaluation.predictions).read_text()
    line = json.loads(stored.splitlines()[0])
    assert (line["video_as"], line["video_frames"]) == ("frames", 3)


@pytest.mark.django_db
def test_an_audio_release_is_judged_with_input_audio_and_a_video_run_as_video_urls(tmp_path):
    from io import StringIO

    from django.core.management import CommandError, call_command

    from curation.models import JudgeRun

    release = omni_media_release(tmp_path, "text_to_audio")
    with RecordingJudge() as fake:
        assert judge_run(release, fake).status == "complete"
    content = json.loads(fake.bodies[0])["messages"][1]["content"]
    audio = [p["input_audio"] for p in content if p["type"] == "input_audio"]
    assert len(audio) == 2 and {a["format"] for a in audio} == {"wav"}
    release = omni_media_release(tmp_path / "v", "text_to_video")
    with RecordingJudge() as fake:
        run = judge_run(release, fake, video_as="video")
        assert run.status == "complete", run.error
        # The shell command takes the same options.
        args = [release.project.slug, release.version, "--endpoint", "fake", "--name", "shell"]
        with pytest.raises(CommandError, match="1 to 64 frames"):
            call_command("judge_release", *args, "--video-frames", "65", stdout=StringIO())
        call_command("judge_release", *args, "--video-frames", "2", stdout=StringIO())
    shell = JudgeRun.objects.get(name="shell")
    assert (shell.status, shell.video_as, shell.video_frames) == ("complete", "frames", 2)
    frames = json.loads(fake.bodies[-1])["messages"][1]["content"]
    assert [p["type"] for p in frames].count("image_url") == 4  # 2 frames of each response
    content = json.loads(fake.bodies[0])["messages"][1]["content"]
    assert [p["type"] for p in content].count("video_url") == 2
    assert "image_url" not in [p["type"] for p in content]


@pytest.mark.django_db
def test_a_stored_media_asset_gives_the_same_parts_as_its_bytes():
    from types import SimpleNamespace

    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage

    name = default_storage.save("media/te/test-clip.mp4", ContentFile(clip()))
    sender = MediaContent(MediaOptions(seed=5, video_frames=2))
    parts = sender.asset_parts(SimpleNamespace(kind="video", file=name))
    assert parts == MediaContent(MediaOptions(seed=5, video_frames=2)).parts(clip(), name, "video")
    sound_name = default_storage.save("media/te/test-beat.wav", ContentFile(sound()))
    (audio,) = sender.asset_parts(SimpleNamespace(kind="audio", file=sound_name))
    assert audio["input_audio"]["format"] == "wav"


@pytest.mark.django_db
def test_a_video_that_does_not_decode_is_a_failed_call_and_the_run_goes_on(tmp_path):
    from django.core.files.base import ContentFile

    from curation.models import JudgeOutput
    from curation.releases import publishing

    release = omni_media_release(tmp_path, "text_video_to_text")
    storage = publishing.release_storage()
    name = f"{release.folder}/{omni_judge.MEDIA_FOLDER}/videos/p1.mp4"
    storage.delete(name)
    storage.save(name, ContentFile(clip()[:400]))  # cut short after its header
    with RecordingJudge() as fake:
        run = judge_run(release, fake)
    assert run.status == "complete" and run.n_errors == 1 and fake.bodies == []
    (output,) = JudgeOutput.objects.filter(run=run)
    assert output.output == "None"
    assert output.error.startswith("file 'omni/media_data/videos/p1.mp4' unreadable: ")
