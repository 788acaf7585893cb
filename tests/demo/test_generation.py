"""The generation demo (demo.generation, issue 24): MMRB2-shaped pairs of
pictures and interleaved answers, deterministic, and one response of each
pair verifiably worse in its pixels: objects counted per colour in the PNGs,
an edit's probed pixel, step pictures repeated or missing."""

import hashlib
import io
import itertools
import json

import numpy as np
import pytest
from PIL import Image
from scipy import ndimage

from demo.drawing import COLOURS
from demo.generation import build_generation_pairs, write_mmrb2_tasks

TOLERANCE = 30  # per channel: the PNGs are palette-quantised


@pytest.fixture(scope="module")
def pairs():
    return build_generation_pairs()


def pixels(png: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(png)) as img:
        return np.asarray(img.convert("RGB"), dtype=int)


def count_patches(png: bytes, colour: str) -> int:
    """Patches of one object colour of at least 100 pixels (one per object)."""
    near = np.all(np.abs(pixels(png) - np.array(COLOURS[colour])) <= TOLERANCE, axis=2)
    labels, n = ndimage.label(near)
    sizes = ndimage.sum(near, labels, range(1, n + 1))
    return int(np.sum(sizes >= 100))


def images_of(pair, content: list) -> list[bytes]:
    return [pair.images[value] for kind, value in content if kind == "image"]


def test_twelve_pairs_per_task_deterministic_to_the_byte(pairs):
    assert {task: len(p) for task, p in pairs.items()} == {"t2i": 12, "edit": 12, "interleaved": 12}
    again = build_generation_pairs()

    def digest(all_pairs):
        h = hashlib.sha256()
        for task_pairs in all_pairs.values():
            for pair in task_pairs:
                h.update(json.dumps(pair.record(), sort_keys=True).encode())
                for path, data in sorted(pair.images.items()):
                    h.update(path.encode() + hashlib.sha256(data).digest())
        return h.hexdigest()

    assert digest(again) == digest(pairs)
    assert digest(build_generation_pairs(seed=7)) != digest(pairs)


def test_pairs_have_the_published_shapes_and_consistent_labels(pairs):
    for task, task_pairs in pairs.items():
        for pair in task_pairs:
            record = pair.record()
            assert list(record) == [
                "id",
                "response_a",
                "response_b",
                "chosen",
                "human_annotations",
                "prompt_source",
                "prompt_metadata",
                "prompt_content",
            ]
            annotations = record["human_annotations"]
            assert len(annotations) == 3 and all(1 <= v <= 6 for v in annotations)
            # MMRB2: chosen is A exactly when the mean is above 3.5; the worse is the other.
            assert record["chosen"] == ("A" if sum(annotations) / 3 > 3.5 else "B")
            assert record["prompt_metadata"]["worse"] != record["chosen"]
            a = record["response_a"]["response_content"]
            b = record["response_b"]["response_content"]
            # Response pictures are images/{id}_{k}.png, k counting through A into B.
            paths = [v for kind, v in a + b if kind == "image"]
            assert paths == [f"images/{pair.external_id}_{k}.png" for k in range(len(paths))]
            for _, path in [p for p in record["prompt_content"] if p[0] == "image"]:
                assert path.startswith(f"input_images/{pair.external_id}_")
            for png in pair.images.values():
                with Image.open(io.BytesIO(png)) as img:
                    assert img.format == "PNG" and 256 <= img.width <= 512
            kinds = [[kind for kind, _ in content] for content in (a, b)]
            prompt = [kind for kind, _ in record["prompt_content"]]
            if task == "t2i":
                assert prompt == ["text"] and kinds == [["image"], ["image"]]
            elif task == "edit":
                assert prompt == ["image", "text"] and kinds == [["image"], ["image"]]
            else:
                for response in kinds:  # text first, then text and pictures in turn
                    assert response[0] == "text" and "image" in response
                    assert "image" not in {
                        second for first, second in itertools.pairwise(response) if first == "image"
                    }
    models = [(p.model_a == p.model_b) for task_pairs in pairs.values() for p in task_pairs]
    assert 0 < sum(models) < len(models)  # some pairs have one model on both sides


def test_t2i_objects_counted_in_the_pixels_match_the_record_and_the_worse_misses(pairs):
    counted = 0
    for pair in pairs["t2i"]:
        meta = pair.prompt_metadata
        asked = meta["asked"]
        a, b = pair.record()["response_a"], pair.record()["response_b"]
        drawn = {}
        for side, response in (("response_a", a), ("response_b", b)):
            [png] = images_of(pair, response["response_content"])
            if "objects" not in meta[side]:
                assert meta[side]["text"]  # a sign: what it says is recorded
                drawn[side] = meta[side]["text"]
                continue
            objects = meta[side]["objects"]
            for colour in {o["colour"] for o in objects}:
                expected = sum(o["colour"] == colour for o in objects)
                assert count_patches(png, colour) == expected, (pair.external_id, side, colour)
                counted += 1
            drawn[side] = sorted((o["shape"], o["colour"]) for o in objects)
        better = "response_a" if pair.chosen == "A" else "response_b"
        worse = "response_b" if pair.chosen == "A" else "response_a"
        if "count" in asked:
            assert len(drawn[better]) == asked["count"] != len(drawn[worse])
        elif "objects" in asked:
            wanted = sorted((s, c) for s, c in asked["objects"])
            assert drawn[better] == wanted != drawn[worse]
        else:
            assert drawn[better] == asked["text"] != drawn[worse]
    assert counted >= 20


def test_edit_probe_shows_the_edit_in_the_better_and_not_in_the_worse(pairs):
    for pair in pairs["edit"]:
        meta = pair.prompt_metadata
        x, y = meta["probe"]["xy"]
        record = pair.record()
        [source] = images_of(pair, record["prompt_content"])
        before = pixels(source)[y, x]
        assert np.all(np.abs(before - meta["probe"]["input"]) <= TOLERANCE)
        seen = {}
        for side in ("response_a", "response_b"):
            [png] = images_of(pair, record[side]["response_content"])
            seen[side] = pixels(png)[y, x]
            assert np.all(np.abs(seen[side] - meta[side]["probe_colour"]) <= TOLERANCE)
        better = seen[f"response_{pair.chosen.lower()}"]
        worse = seen[f"response_{meta['worse'].lower()}"]

        def far(p, q):
            return np.abs(p - q).sum() > 3 * TOLERANCE

        # The better made the edit there; the worse did not make that edit:
        # it left the input as it was, or (an added balloon) drew the wrong colour.
        assert far(better, before) and far(worse, better), pair.external_id
        wrong_colour = (
            meta["defect"].startswith("the balloon is ") and "missing" not in meta["defect"]
        )
        assert far(worse, before) == wrong_colour, pair.external_id
        # Not the same picture as the input even when the edit is missing.
        assert source not in images_of(pair, record["response_a"]["response_content"])
        assert source not in images_of(pair, record["response_b"]["response_content"])


def test_interleaved_step_pictures_match_their_record(pairs):
    for pair in pairs["interleaved"]:
        meta = pair.prompt_metadata
        record = pair.record()
        steps = {}
        for side in ("response_a", "response_b"):
            pictures = images_of(pair, record[side]["response_content"])
            states = meta[side]["pictures"]
            assert len(pictures) == len(states)
            # Two pictures are the same bytes exactly when they show the same state.
            for i in range(len(states)):
                for j in range(len(states)):
                    assert (pictures[i] == pictures[j]) == (states[i] == states[j])
            steps[side] = states
        better = steps[f"response_{pair.chosen.lower()}"]
        worse = steps[f"response_{meta['worse'].lower()}"]
        assert len({json.dumps(s) for s in better}) == len(better)  # every step changes it
        assert worse != better
        if pair.prompt_source == "demo-algorithm-steps":
            assert better[-1] == sorted(better[-1]) and worse[-1] != sorted(worse[-1])
        assert all(len(g) == 2 and set(g) <= {"A", "B", "C"} for g in meta["grades"])


def test_task_files_are_written_as_json_dump_indent_2_with_their_images(pairs, tmp_path):
    files = write_mmrb2_tasks(pairs, tmp_path)
    assert sorted(files) == ["edit", "interleaved", "t2i"]
    for task, path in files.items():
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
        assert text == json.dumps(data, indent=2)
        assert [p["id"] for p in data["pairs"]] == [p.external_id for p in pairs[task]]
        for pair in pairs[task]:
            for image_path, png in pair.images.items():
                assert (tmp_path / image_path).read_bytes() == png
