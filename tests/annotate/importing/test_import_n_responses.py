"""Items of N >= 2 responses (issue 32 item 1): the one writer takes 2 to
ITEM_MAX_RESPONSES response slots into a project whose task is not
pairwise, and refuses anything but a pair into a pairwise project, naming
file, line and field."""

from __future__ import annotations

import hashlib
import json
from types import SimpleNamespace

import pytest
from django.core.exceptions import ValidationError

from annotate.importing import formats
from annotate.importing.formats import TEXT, ParsedFile, ParsedItem, ParsedPart
from annotate.importing.records import ImportFailed
from annotate.importing.service import import_items_from_paths
from annotate.models import Item, ItemPart, Task, text_part, write_item_content
from annotate.models.parts import ITEM_MAX_RESPONSES
from tests.factories import make_item, make_project

pytestmark = pytest.mark.django_db


def _read(source, context):
    """A `.nresp` file: `id | prompt | response | response | …` per line."""
    path = source.path

    def items():
        for n, line in enumerate(path.read_text().splitlines(), start=1):
            ext_id, prompt, *responses = (f.strip() for f in line.split("|"))
            yield ParsedItem(
                line=n,
                index=n - 1,
                external_id=ext_id,
                domain="vqa",
                prompt=[ParsedPart(TEXT, text=prompt)],
                responses=[[ParsedPart(TEXT, text=r)] for r in responses],
                models=[f"model-{k}" for k in range(len(responses))],
            )

    def fingerprint(item):
        payload = [item.external_id, [[p.text for p in s] for s in item.slots().values()]]
        return hashlib.sha256(json.dumps(payload).encode()).hexdigest()

    listed = list(items())
    return ParsedFile(
        format="nresp",
        filename=path.name,
        items=items,
        count=len(listed),
        ids=[i.external_id for i in listed],
        images={},
        image_source=context.images,
        fingerprint=fingerprint,
        labels={"responses": "answers"},
    )


NRESP = SimpleNamespace(
    NAMES=("nresp",),
    SUFFIXES=(".nresp",),
    detect=lambda source: source.name.endswith(".nresp"),
    read=_read,
)


@pytest.fixture
def nresp():
    formats.register(NRESP)
    yield NRESP
    formats.unregister(NRESP)


def _import(tmp_path, project, text):
    path = tmp_path / "set.nresp"
    path.write_text(text)
    return import_items_from_paths(project=project, dataset=path)


FOUR = "q1 | Which? | A. | B. | C. | D.\n"


def test_a_four_response_item_imports_into_a_best_of_n_project(tmp_path, nresp):
    project = make_project(task=Task.BEST_OF_N)
    result = _import(tmp_path, project, FOUR + "q2 | Pair? | Yes. | No.\n")
    assert result.created == 2
    item = Item.objects.get(project=project, external_id="q1")
    parts = list(
        ItemPart.objects.filter(item=item).order_by("slot").values_list("slot", "position", "text")
    )
    assert parts == [
        ("prompt", 0, "Which?"),
        ("response_1", 0, "A."),
        ("response_2", 0, "B."),
        ("response_3", 0, "C."),
        ("response_4", 0, "D."),
    ]
    # The flat copy: the prompt and the first two responses; no MRB image.
    assert (item.prompt, item.response_1, item.response_2, item.image_id) == (
        "Which?",
        "A.",
        "B.",
        None,
    )
    assert (item.model_1, item.model_2) == ("model-0", "model-1")
    # The same file again is a no-op.
    again = _import(tmp_path, project, FOUR + "q2 | Pair? | Yes. | No.\n")
    assert (again.created, again.unchanged) == (0, 2)


def test_a_pairwise_project_refuses_more_than_two_responses_naming_line_and_field(tmp_path, nresp):
    project = make_project()
    assert project.task == Task.PAIRWISE
    text = "ok | Pair? | Yes. | No.\n" + FOUR + "q3 | Three? | A. | B. | C.\n"
    with pytest.raises(ImportFailed) as failure:
        _import(tmp_path, project, text)
    assert [str(p) for p in failure.value.problems] == [
        "set.nresp:2: record 1: field 'answers': has 4 responses; a pairwise project's items "
        f"have exactly two (a best-of-N or ranking project takes up to {ITEM_MAX_RESPONSES})",
        "set.nresp:3: record 2: field 'answers': has 3 responses; a pairwise project's items "
        f"have exactly two (a best-of-N or ranking project takes up to {ITEM_MAX_RESPONSES})",
    ]
    # Nothing was written, not even the valid pair before them.
    assert not Item.objects.filter(project=project).exists()


def test_the_response_limit_holds_for_every_task(tmp_path, nresp):
    project = make_project(task=Task.RANKING)
    too_many = " | ".join(f"R{k}." for k in range(ITEM_MAX_RESPONSES + 1))
    with pytest.raises(ImportFailed) as failure:
        _import(tmp_path, project, f"ok | P | A. | B. | C.\nbig | P | {too_many}\none | P | A.\n")
    assert [str(p) for p in failure.value.problems] == [
        f"set.nresp:2: record 1: field 'answers': has {ITEM_MAX_RESPONSES + 1} responses; "
        f"an item has at most {ITEM_MAX_RESPONSES}",
        "set.nresp:3: record 2: field 'answers': has 1 responses; an item has at least 2",
    ]
    assert not Item.objects.filter(project=project).exists()
    # At the limit, it is written.
    at_limit = " | ".join(f"R{k}." for k in range(ITEM_MAX_RESPONSES))
    assert _import(tmp_path, project, f"max | P | {at_limit}\n").created == 1
    slots = set(ItemPart.objects.filter(item__external_id="max").values_list("slot", flat=True))
    assert f"response_{ITEM_MAX_RESPONSES}" in slots


def test_write_item_content_follows_the_project_task():
    pair = make_item()
    four = [[text_part(t)] for t in "ABCD"]
    with pytest.raises(ValidationError, match="a pairwise project's items have exactly two"):
        write_item_content(pair, [text_part("P")], four)
    assert ItemPart.objects.filter(item=pair, slot="response_3").count() == 0
    item = make_item(project=make_project(task=Task.BEST_OF_N))
    by_slot = write_item_content(item, [text_part("P")], four)
    assert list(by_slot) == ["prompt", "response_1", "response_2", "response_3", "response_4"]
    nine = [[text_part(str(k))] for k in range(ITEM_MAX_RESPONSES + 1)]
    with pytest.raises(ValidationError, match=f"an item has at most {ITEM_MAX_RESPONSES}"):
        write_item_content(item, [text_part("P")], nine)
