"""Project judge runs over the other pairwise benchmarks' items (issue 36
item 3 follow-up): each item is judged by the benchmark owning its domain,
with that benchmark's own prompt and content builder, in both orders; votes
are canonical (a swapped order maps back); the calibration report has the
domain; annotators see none of it."""

from __future__ import annotations

import base64
import json

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from annotate.models import Domain, image_part, media_part, text_part, write_item_content
from curation.benchmarks.mmrb2 import judge as mmrb2_judge
from curation.benchmarks.mmrlhf import judge as mmrlhf_judge
from curation.benchmarks.omni import judge as omni_judge
from curation.benchmarks.videorb import judge as videorb_judge
from curation.benchmarks.vlrb import judge as vlrb_judge
from curation.benchmarks.vlrb.card import MARK
from curation.evaluation.calibration_report import calibration_for
from curation.evaluation.judge_runs import run_judge, save_endpoint
from curation.evaluation.project_judging import (
    project_inputs,
    project_records,
    start_project_judge_run,
)
from curation.models import JudgeRunStatus, JudgeVote
from tests.curation.evaluation.fake_openai import FakeJudge
from tests.factories import (
    make_assignment,
    make_image,
    make_item,
    make_judgement,
    make_media,
    make_member,
    make_project,
    png_bytes,
)

pytestmark = pytest.mark.django_db

API_KEY = "sk-test-shapes-31"
MODEL = "fake-shapes-secret-model"
N = 6  # items per shape; the first is answered "A" in both orders (biased)
VIDEO = b"\x00\x00\x00\x18ftypmp42 not decoded: sent as a video part"

# shape -> (export category of its domain, prompt start, content part types after the text)
SHAPES = {
    "mmrlhf": ("mmrlhf/long", mmrlhf_judge.JUDGE_PROMPT[:40], ["image_url"]),
    "videorb": ("videorb/knowledge", videorb_judge.PROMPT[:40], ["video_url"]),
    "vlrb": ("", vlrb_judge.PROMPT[:40], ["image_url"]),
    "mrb": ("", "Please act as an impartial judge", ["image_url"]),
    "omni": ("omni/text_image_to_text", omni_judge.SYSTEM[:40], None),  # types per item
    "mmrb2": ("mmrb2/interleaved", mmrb2_judge.INSTRUCTION[:40], None),  # interleaved
}
MMRB2_R1 = ["text", "image_url", "text"]  # response 1 of an MMRB2 item: text, image, text
MMRB2_R2 = ["image_url", "text"]
# Omni items by n % 3: an image prompt, an audio prompt, video responses.
OMNI_TYPES = (
    ["text", "text", "image_url", "text", "text", "text", "text"],
    ["text", "text", "input_audio", "text", "text", "text", "text"],
    ["text", "text", "video_url", "text", "video_url"],
)


@pytest.fixture(autouse=True)
def _fast(settings):
    settings.JUDGE_BACKOFF_BASE = 0.01
    settings.JUDGE_BACKOFF_MAX = 0.05
    settings.JUDGE_MAX_RETRIES = 1
    settings.JUDGE_HEARTBEAT_SECONDS = 0.2


class FakeAny(FakeJudge):
    """Knows a pair by its two response texts (their order in the prompt
    gives the order sent); checks each benchmark's prompt and media parts."""

    pairs: dict[str, tuple[str, str, str, str]] = {}  # ID -> (r1, r2, truth, shape)
    types: dict[str, list[str]] = {}  # ID -> the user content's part types (omni)

    def _check(self, payload):
        message = payload["messages"][-1]
        text = json.dumps(message["content"])  # response texts, or media data (base64)
        found = [(e, p) for e, p in self.pairs.items() if p[0] in text and p[1] in text]
        assert len(found) == 1, "no known pair in the prompt"
        ext, (r1, r2, truth, shape) = found[0]
        _, start, kinds = SHAPES[shape]
        types = [p["type"] for p in message["content"]]
        if shape == "omni":
            system = payload["messages"][0]
            assert system["role"] == "system" and system["content"].startswith(start)
            assert f"criterion {ext}" in system["content"], "the item's criterion"
            assert types == self.types[ext], f"omni parts of {ext}"
        elif shape == "mmrb2":  # text and images interleaved, in the item's order
            assert message["content"][0]["text"].startswith(start), "not the MMRB2 prompt"
            assert "The task is interleaved generation" in message["content"][0]["text"]
            a_first = text.index(r1) < text.index(r2)
            a, b = (MMRB2_R1, MMRB2_R2) if a_first else (MMRB2_R2, MMRB2_R1)
            assert types == ["text", "text", "text", "text", *a, "text", *b], "MMRB2 parts"
        else:
            assert len(payload["messages"]) == 1, "one user message"
            prompt = message["content"][0]["text"]
            assert prompt.lstrip().startswith(start.lstrip()), f"not the {shape} prompt"
            assert types == ["text", *kinds], f"{shape} parts"
        order = "original" if text.index(r1) < text.index(r2) else "swapped"
        right = "A" if (truth == "1") == (order == "original") else "B"
        return ext, order, (shape, right)


def picture():
    image = make_image()
    default_storage.save(image.file, ContentFile(png_bytes()))
    return image


def clip_bytes(n: int) -> bytes:
    return VIDEO + f" clip {n}".encode()


def clip(n: int, kind: str = "video"):
    data = clip_bytes(n)
    asset = make_media(kind, size_bytes=len(data))
    default_storage.save(asset.file, ContentFile(data))
    return asset


def words(shape: str, pick: str) -> str:
    if shape == "vlrb":  # the official prompt's own verdict words
        return f"Overall Judgment: Answer {1 if pick == 'A' else 2} is better"
    return pick


def add_items(project, shape: str, annotators, first: int) -> list:
    category = SHAPES[shape][0]
    domain = (
        Domain.objects.create(
            project=project, slug=shape, title=shape, export_category=category, kind="preference"
        )
        if category
        else project.domains.get(slug="vqa")
    )
    items = []
    for n in range(first, first + N):
        meta = {MARK: {"id": f"v{n}"}} if shape == "vlrb" else {}
        item = make_item(project, domain, image=None, meta=meta, external_id=f"{shape}-{n}")
        r1, r2 = f"Answer one of pair {n}.", f"Answer two of pair {n}."
        responses = [[text_part(r1)], [text_part(r2)]]
        if shape == "videorb":
            prompt = [media_part(clip(n)), text_part(f"What happens in clip {n}?")]
        elif shape == "mmrb2":
            prompt = [text_part(f"Tell a story of {n} with pictures.")]
            responses = [
                [text_part(r1), image_part(picture().pk), text_part("The end.")],
                [image_part(picture().pk), text_part(r2)],
            ]
        elif shape == "omni" and n % 3 == 1:
            prompt = [media_part(clip(n, "audio")), text_part(f"What is said in {n}?")]
        elif shape == "omni" and n % 3 == 2:
            prompt = [text_part(f"Film a cat, take {n}.")]
            one, two = clip(n), clip(-n)
            responses = [[media_part(one)], [media_part(two)]]
            r1, r2 = (base64.b64encode(clip_bytes(k)).decode() for k in (n, -n))
        else:
            prompt = [image_part(picture().pk), text_part(f"What is in picture {n}?")]
        write_item_content(item, prompt, responses)
        if shape == "omni":
            item.criterion = f"Which is more faithful? (criterion {item.external_id})"
            item.save(update_fields=["criterion"])
            FakeAny.types[item.external_id] = OMNI_TYPES[n % 3]
        truth = "1" if n % 2 else "2"
        FakeAny.pairs[item.external_id] = (r1, r2, truth, shape)
        for annotator in annotators:
            assignment = make_assignment(
                item, annotator, status="submitted", submitted_at=timezone.now()
            )
            make_judgement(assignment, choice=truth)
        items.append(item)
    return items


def judged(project, shapes, **kwargs):
    curator = make_member(project, role="curator")
    admin = make_member(project, role="admin")
    with FakeAny(api_key=API_KEY, model=MODEL, records=[]) as fake:
        biased = {f"{s}-{n}" for s in shapes for n in range(1000) if n % N == 0}
        fake.decide = lambda ext, order, right: words(right[0], "A" if ext in biased else right[1])
        endpoint = save_endpoint(
            project=project, actor=admin, name="fake", base_url=fake.base_url, model=MODEL,
            temperature=0.0, max_tokens=64, timeout_seconds=5.0, api_key=API_KEY,
        )  # fmt: skip
        run = start_project_judge_run(
            project=project, endpoint=endpoint, name="shapes", concurrency=2, user=curator,
            enqueue=False, video_as="video", **kwargs,
        )  # fmt: skip
        run = run_judge(run_id=run.pk)
    assert fake.problems == []
    assert run.status == JudgeRunStatus.COMPLETE, run.error
    return run, fake


def assert_canonical(run, items):
    votes = {(v.item_id, v.order): v.choice for v in JudgeVote.objects.filter(run=run)}
    assert len(votes) == 2 * len(items)
    for item in items:
        truth = FakeAny.pairs[item.external_id][2]
        got = (votes[(item.pk, "original")], votes[(item.pk, "swapped")])
        biased = int(item.external_id.rsplit("-", 1)[1]) % N == 0
        assert got == (("1", "2") if biased else (truth, truth)), item.external_id


@pytest.mark.parametrize("shape", ["mmrlhf", "videorb", "vlrb", "omni", "mmrb2"])
def test_a_project_of_one_shape_is_judged_by_its_benchmark_in_both_orders(shape, client):
    FakeAny.pairs, FakeAny.types = {}, {}
    project = make_project(votes_per_item=3)
    annotators = [make_member(project) for _ in range(3)]
    items = add_items(project, shape, annotators, 0)
    assert {r["_judge"] for r in project_records(project)} == {shape}
    run, fake = judged(project, [shape])
    assert run.scoring == shape and run.video_as == "video"
    records, reader = project_inputs(run)  # the run's media options; only its items' files
    assert reader.content.options.video_as == "video"
    assert {r["ID"] for r in records} == {i.external_id for i in items}
    with pytest.raises(OSError, match="not a file of this project"):
        reader("images/elsewhere.png")
    assert set(fake.requests) == {
        (i.external_id, o) for i in items for o in ("original", "swapped")
    }
    assert_canonical(run, items)
    (report,) = calibration_for(project)
    rows = {row["domain"]: row for row in report["rows"]}
    domain = items[0].domain.slug
    assert set(rows) == {None, domain} and rows[domain]["n_votes"] == 2 * N
    # An annotator sees none of it.
    annotator = annotators[0]
    fresh = make_item(project, items[0].domain)
    assignment = make_assignment(fresh, annotator)
    client.force_login(annotator)
    page = client.get(reverse("work_item", args=[assignment.pk])).content.decode()
    api = APIClient()
    api.force_authenticate(annotator)
    detail = api.get(f"/api/v1/assignments/{assignment.pk}/").content.decode()
    for text in (page, detail):
        assert MODEL not in text and "shapes" not in text and "Verdict" not in text
    assert client.get(reverse("calibration", args=[project.slug])).status_code == 403
    assert api.get(f"/api/v1/projects/{project.slug}/calibration/").status_code == 403
    assert api.get(f"/api/v1/projects/{project.slug}/judge-runs/").status_code == 403


def test_a_mixed_project_judges_each_item_by_the_benchmark_of_its_domain():
    FakeAny.pairs, FakeAny.types = {}, {}
    project = make_project(votes_per_item=3)
    annotators = [make_member(project) for _ in range(3)]
    items = []
    shapes = ["mrb", "mmrlhf", "videorb", "omni", "mmrb2"]
    for k, shape in enumerate(shapes):
        items += add_items(project, shape, annotators, k * N)
    owners = {r["ID"]: r["_judge"] for r in project_records(project)}
    assert owners == {i.external_id: FakeAny.pairs[i.external_id][3] for i in items}
    run, _ = judged(project, shapes)
    assert_canonical(run, items)
    (report,) = calibration_for(project)
    assert {row["domain"] for row in report["rows"]} == {None, "vqa", *shapes[1:]}
