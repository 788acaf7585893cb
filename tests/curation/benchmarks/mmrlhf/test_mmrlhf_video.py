"""MM-RLHF-RewardBench's video category (issue 35 items 1 and 5): a folder
of real frames (decoded from demo.clips' synthetic clip, numbered without
padding as an extractor names them) imported as an ordered strip of images,
released with every frame and the line byte for byte, scored in its
category as the published get_acc.py counts, and judged on 32 frames picked
as the published inference picks them."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.conf import settings

from annotate.importing.service import import_items_from_paths
from annotate.models import Item, ItemPart
from curation.benchmarks import registry
from curation.benchmarks.base import Upload
from curation.benchmarks.mmrlhf import judge
from curation.releases.build import build_release
from tests.annotate.importing import mmrlhf_sets
from tests.curation.benchmarks.mmrlhf.test_scoring import published
from tests.curation.releases.test_releases import new_release
from tests.factories import make_project

pytestmark = pytest.mark.django_db
FILE = "mmrlhf/mm_rlhf_rewardbench.jsonl"
FOLDER = "video/v_real-Scene-001"  # as the published lines name theirs
FRAMES = 40


def frame_files() -> dict[str, bytes]:
    """The clip's frames as JPEG files 0.jpg … 39.jpg."""
    import av
    from PIL import Image

    from demo import clips

    data = clips.video_bytes(seconds=FRAMES / 10, width=64, height=48, fps=10)
    out = {}
    with av.open(io.BytesIO(data)) as box:
        for n, frame in enumerate(box.decode(video=0)):
            buffer = io.BytesIO()
            Image.fromarray(frame.to_ndarray(format="rgb24")).save(buffer, "JPEG", quality=90)
            out[f"{n}.jpg"] = buffer.getvalue()
    assert len(out) == FRAMES
    return out


@pytest.fixture
def video_release(tmp_path):
    rows = [r for r in mmrlhf_sets.rows() if "video" not in r][:5]
    rows += [
        {"id": "v_real_1_10930", "video": FOLDER, "prompt": "What does the setting look like?",
         "chosen": f"Answer {k}.", "rejected": f"Worse answer {k}.",
         "chosen_reason": "detailed", "rejected_reason": "too simple"}
        for k in range(3)
    ]  # fmt: skip
    source = mmrlhf_sets.write(tmp_path / "src", rows)
    for name in mmrlhf_sets.VIDEO_FRAMES:  # the set's stand-in frames: ours instead
        (tmp_path / "src" / FOLDER / name).unlink()
    frames = frame_files()
    for name, data in frames.items():
        (tmp_path / "src" / FOLDER / name).write_bytes(data)
    project = make_project(slug="mmv", seed=2)
    assert import_items_from_paths(project=project, dataset=source, fmt="mmrlhf").created == 8
    from curation.models import Verdict

    Verdict.objects.filter(item__project=project).update(
        status="agreed", final_choice="1", provenance="majority"
    )
    domains = project.domains.filter(slug__startswith="mmrlhf-").values_list("slug", flat=True)
    domains = list(domains)
    release = build_release(release_id=new_release(project, domains=domains).pk)
    assert release.status == "ready", release.error
    return project, release, source, rows, frames, Path(settings.MEDIA_ROOT) / release.folder


def test_frames_are_an_ordered_strip_released_byte_for_byte(video_release):
    project, _release, source, _rows, frames, folder = video_release
    item = Item.objects.get(project=project, external_id="v_real_1_10930#2")
    parts = list(ItemPart.objects.filter(item=item, slot="prompt").order_by("position"))
    assert [p.kind for p in parts] == ["image"] * FRAMES + ["text"]
    assert [p.source_path for p in parts[:-1]] == [f"{FOLDER}/{n}.jpg" for n in range(FRAMES)]
    assert item.domain.export_category == "mmrlhf/video"
    assert (folder / FILE).read_bytes() == source.read_bytes()
    for name, data in frames.items():
        assert (folder / "mmrlhf" / FOLDER / name).read_bytes() == data
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["mmrlhf"]["frames"][FOLDER] == [f"{n}.jpg" for n in range(FRAMES)]
    assert manifest["mmrlhf"]["categories"]["video"] == 3


def test_the_video_category_is_scored_as_published(video_release):
    _project, release, _source, rows, _frames, _folder = video_release
    rewards = [[1, 0], [0, 1], [2, 1], [1, 1], [3, 0], [1, 0], [0.5, 0.2], [0, 0.1]]
    body = "".join(json.dumps({"id": r["id"], "rewards": w}) + "\n"
                   for r, w in zip(rows, rewards, strict=True))  # fmt: skip
    report = registry.get("mmrlhf").score(release, Upload(body.encode(), "p.jsonl")).report
    expected = published([dict(r, rewards=w) for r, w in zip(rows, rewards, strict=True)])
    video = next(c for c in report["mmrlhf"]["categories"] if c["category"] == "video")
    assert video["acc"] == pytest.approx(expected["video"]["accuracy"], abs=1e-9)
    assert video["acc_plus"] == pytest.approx(expected["video"]["acc_plus"], abs=1e-9)
    assert report["mmrlhf"]["acc"] == pytest.approx(expected["overall"]["accuracy"], abs=1e-9)


def test_a_judge_sees_32_frames_picked_as_the_published_inference_picks(video_release):
    import numpy as np

    _project, release, _source, _rows, _frames, _folder = video_release
    records = registry.get("mmrlhf").judge_records(release)
    video = next(r for r in records if r["ID"] == "v_real_1_10930#1")
    picked = np.linspace(0, FRAMES - 1, judge.VIDEO_FRAMES, dtype=int)  # r1_reward.py's rule
    assert video["images"] == [f"mmrlhf/{FOLDER}/{i}.jpg" for i in picked]
    assert video["images"][0].endswith("/0.jpg") and video["images"][-1].endswith("/39.jpg")
    assert judge.sampled_frames(["a", "b"]) == ["a", "b"]
