"""The records benchmarks' shared base (curation.benchmarks.common): what a
new benchmark of JSONL records per domain inherits, checked on its own."""

from __future__ import annotations

import codecs
import hashlib
from types import SimpleNamespace

import pytest

from curation.benchmarks.base import EvaluationError, Upload
from curation.benchmarks.common.card import RecordsCardSection, changed_line, counts
from curation.benchmarks.common.records import (
    RecordsBenchmark,
    predictions_text,
    refuse_options,
)
from curation.benchmarks.common.release import left_out, released_ids, response_slots


class ToySection(RecordsCardSection):
    key = "toy"
    prefix = "toy/"
    file = "toy/records.jsonl"
    noun = "the toy records"
    prompt_noun = "toy"
    intro_text = "Toy prompts."
    dataset_name = "toy"

    @staticmethod
    def card_lines(section, *, mixed):
        return [f"{section['records']} toy records"]


class Toy(RecordsBenchmark):
    key = "toy"
    title = "Toy"
    prefix = "toy/"
    file = "toy/records.jsonl"
    label = "toy"
    position = 99

    def judge_records(self, release):
        return [{"id": "a"}, {"id": "b"}]


def test_card_section_speaks_from_its_manifest_section():
    meta = SimpleNamespace(manifest_extra={"toy": {"records": 1}})
    section = ToySection(meta, {})
    assert section.holds and section.phrase() == "1 toy prompt"
    assert section.owns("toy/easy") and not section.owns("other/toy")
    assert section.lines(mixed=True, others=[]) == ["1 toy records"]
    assert section.files(parquet=False, trl=False) == "`toy/records.jsonl` (the toy records), "
    assert section.loading([], parquet=False, trl=False)[4] == (
        'toy = load_dataset("json", data_files="path/to/this/folder/toy/records.jsonl", '
        'split="train")'
    )
    assert not ToySection(SimpleNamespace(manifest_extra={}), {}).holds


def test_counts_and_changed_line_read_as_the_card_says():
    assert counts(["b", "a", "b"]) == {"a": 1, "b": 2}
    assert changed_line(1, "another ranking") == (
        "- 1 record has another ranking than imported (the studio's decision differs)."
    )
    assert changed_line(2, "x").startswith("- 2 records have x than")


def test_left_out_names_the_first_five():
    assert left_out([], "toy", "toy/records.jsonl", "why") == []
    [one] = left_out(["a"], "toy", "f.jsonl", "no pick")
    assert one == "1 toy item left out of f.jsonl (no pick): a"
    [many] = left_out(list("abcdef"), "toy", "f.jsonl", "no pick")
    assert many == "6 toy items left out of f.jsonl (no pick): a, b, c, d, e, …"


def test_released_ids_keep_own_rule_and_sort_by_new_id():
    rows = [(1, "x"), (2, "keep"), (3, "y")]
    assert released_ids(rows, "", "tp") == ({"x": "x", "keep": "keep", "y": "y"}, rows)
    released, ordered = released_ids(rows, "salt", "tp", lambda salt, ids: {"keep": "kept:0"})
    digest = hashlib.sha256(b"salt:tp:x").hexdigest()[:16]
    assert released["keep"] == "kept:0" and released["x"] == f"tp_{digest}"
    assert [released[row[1]] for row in ordered] == sorted(released.values())


def test_response_slots_are_in_slot_order():
    assert response_slots(["response_10", "prompt", "response_2", "response_1"]) == [
        "response_1",
        "response_2",
        "response_10",
    ]


def test_predictions_text_strips_the_bom_and_refuses_what_it_cannot_read():
    assert predictions_text(codecs.BOM_UTF8 + b'{"id": 1}', "p.jsonl") == '{"id": 1}'
    with pytest.raises(EvaluationError, match=r"p.jsonl: larger than 3 bytes"):
        predictions_text(b"abcd", "p.jsonl", 3)
    with pytest.raises(EvaluationError, match=r"p.jsonl: not valid UTF-8 \(byte 1\)"):
        predictions_text(b"a\xff", "p.jsonl")


def test_base_serves_its_domains_and_refuses_what_it_lacks(tmp_path):
    toy = Toy()
    assert toy.serves([SimpleNamespace(export_category="toy/easy")])
    assert not toy.serves([SimpleNamespace(export_category="other/toy")])
    release = SimpleNamespace(manifest={"files": {"toy/records.jsonl": "sha"}})
    assert toy.in_release(release) and not toy.in_release(SimpleNamespace(manifest=None))
    assert toy.judge_item_count(release) == 2
    with pytest.raises(EvaluationError, match="swapped file empty"):
        refuse_options(Upload(b"", "p", swapped=b"x", swapped_filename="s"), "Toy", "one")
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "records.jsonl").write_text('{"id": "a"}\n\n', encoding="utf-8")
    (tmp_path / "p.jsonl").write_bytes(b'{"id": "a"}')
    options = SimpleNamespace(swapped=None, official_compat=False)
    records, text = toy.one_file(str(tmp_path), [str(tmp_path / "p.jsonl")], options, len)
    assert records == len('{"id": "a"}\n\n') and text == '{"id": "a"}'
    with pytest.raises(EvaluationError, match="Give one toy predictions file"):
        toy.one_file(str(tmp_path), [], options, len)


def test_chat_request_sends_temperature_only_when_set_in_a_fixed_key_order():
    from curation.benchmarks.common.judge import chat_request

    endpoint = SimpleNamespace(model="m", max_tokens=64, temperature=None)
    messages = [{"role": "user", "content": "hi"}]
    assert list(chat_request(endpoint, messages)) == ["model", "messages", "max_tokens"]
    endpoint.temperature = 0.0
    body = chat_request(endpoint, messages)
    assert list(body) == ["model", "messages", "max_tokens", "temperature"]
    assert (body["model"], body["messages"], body["max_tokens"], body["temperature"]) == (
        "m", messages, 64, 0.0)  # fmt: skip


def test_pick_and_votes_over_both_orders():
    from curation.benchmarks.common.judge import pick, votes_both_orders

    answers = ("x [[A]]", "[[B]]", "[[A]] [[B]]", "", None)
    assert [pick(a) for a in answers] == ["A", "B", "", "", ""]
    assert votes_both_orders("[[A]]", "[[B]]") == (2, 0)  # the chosen both times
    assert votes_both_orders("[[B]]", "[[A]]") == (0, 2)
    assert votes_both_orders("[[A]]", "[[A]]") == (1, 1)  # position bias
    assert votes_both_orders("[[A]]", None) == (1, 0)


def test_pick_of_scores_follows_the_chosen_slot_and_ties_are_no_pick():
    from curation.benchmarks.common.records import pick_of_scores

    assert [pick_of_scores(c, g) for c, g in [("1", (2, 1)), ("1", (1, 2)), ("2", (2, 1)),
                                              ("2", (1, 2)), ("1", (1, 1))]] == [
        "1", "2", "2", "1", ""]  # fmt: skip


def test_prediction_lines_name_file_and_line_in_the_scorers_error():
    from curation.benchmarks.common.predictions import first_line_object, prediction_lines

    class Refused(ValueError):
        pass

    text = '{"id": 1}\n\n{"id": 2}\n'
    assert list(prediction_lines(text, "p.jsonl", Refused, "'id'")) == [
        (1, "p.jsonl:1", {"id": 1}), (3, "p.jsonl:3", {"id": 2})]  # fmt: skip
    refused = [
        ("{x", "p.jsonl:2: not valid JSON"),
        ("[1]", "p.jsonl:2: expected an object with 'id'"),
        ("[" * 100_000, "p.jsonl:2: values nested"),
    ]
    for bad, message in refused:
        with pytest.raises(Refused, match=message):
            list(prediction_lines('{"id": 1}\n' + bad, "p.jsonl", Refused, "'id'"))
    assert first_line_object(' \n{"id": 1}\nx') == {"id": 1}
    assert first_line_object("[1]") is None and first_line_object("{") is None
