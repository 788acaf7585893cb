"""Judging a release's ranked records (`ranked/rankings.jsonl`, MR²Bench's
layout) with an LLM: the studio's N-way ranking prompt (MR²Bench publishes
no judge script). No Django beyond reading the release's file.

* One call per record (call key ``"rank"``), whatever the run's "both
  orders" option: the N responses are shown labelled ``[[A]]``, ``[[B]]``, …
  in an order drawn from the run's seed, the record's ID and the call
  (:func:`shown_order`), so a resumed run sends the same request and the
  scorer re-derives the order.
* The verdict is a **ranking line**: every shown label exactly once, best
  first, joined by ``>`` (better than what follows) or ``=`` (as good as),
  e.g. ``[[C]] > [[A]] = [[B]] > [[D]]``; spaces around the signs are
  optional. The last such chain in the answer that names every label once
  counts (labels named in the explanation do not). Tied labels share a
  place (competition form: 1, 2, 2, 4).
* An answer with no such chain (a label missing or repeated, another sign,
  no labels) is unparseable: its record gets no prediction, which the
  ranked scorer counts as a missing prediction (top-1 0, left out of τ-b).
* The answers become a ranked predictions file, ``{"id", "ranking"}`` lines
  in the file's response order, scored by the ranked scorer (top-1 and τ-b).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from typing import Any

from curation.benchmarks.base import EvaluationError, Upload
from curation.benchmarks.common.judge import chat_request
from curation.benchmarks.ranked.card import FILE

CALL = "rank"
LABELS = "ABCDEFGH"  # up to 8 responses
FOLDER = FILE.rsplit("/", 1)[0]  # image paths are relative to the file's folder

SYSTEM_PROMPT = (
    "Please act as an impartial judge and evaluate the quality of the responses provided by "
    "{n} AI assistants to the user question displayed below. Rank them from best to worst: "
    "the assistant that follows the user's instructions and answers the user's question best "
    "comes first. Consider factors such as helpfulness, relevance, accuracy, depth, creativity "
    "and level of detail. Avoid any position bias: the order in which the responses are "
    "presented must not influence your ranking. Do not let the length of the responses or the "
    "names of the assistants influence you. Be as objective as possible. Begin with a short "
    "explanation. Then, on the last line, output your final ranking in exactly this form: "
    'every label {labels} exactly once, best first, separated by " > " where the one before is '
    'better and " = " where they are equally good, for example "{example}".'
)
BLOCK = (
    "[The Start of Assistant {label}'s Answer]\n{answer}\n[The End of Assistant {label}'s Answer]"
)
_LABEL = r"\[\[([A-H])\]\]"
CHAIN = re.compile(_LABEL + r"(?:\s*[>=]\s*" + _LABEL + r")*")
_STEP = re.compile(r"\s*([>=])\s*" + _LABEL)


def shown_order(seed: int, record_id: str, call: str, n: int) -> list[int]:
    """The responses' indexes (file order) in the order shown as A, B, …"""
    order = list(range(n))
    random.Random(f"ranked:{seed}:{record_id}:{call}").shuffle(order)
    return order


def example(n: int) -> str:
    """The prompt's example ranking for n labels (a tie in it when n > 2)."""
    labels = [f"[[{c}]]" for c in LABELS[:n]]
    labels = labels[1:] + labels[:1]  # not simply A first
    signs = [" = " if k == 1 and n > 2 else " > " for k in range(n - 1)]
    return labels[0] + "".join(s + label for s, label in zip(signs, labels[1:], strict=True))


def parse_ranking(text: str | None, n: int) -> list[int] | None:
    """The places (1 = best, ties share the best place of their group) of
    the shown labels A.. in shown order, from the last chain in `text` that
    names each of the n labels once; None when there is none."""
    wanted = set(LABELS[:n])
    for match in reversed(list(CHAIN.finditer(text or ""))):
        chain = match.group(0)
        first = chain[2]
        groups = [[first]]
        for sign, label in _STEP.findall(chain[5:]):
            if sign == "=":
                groups[-1].append(label)
            else:
                groups.append([label])
        named = [label for group in groups for label in group]
        if len(named) != n or set(named) != wanted:
            continue
        places: dict[str, int] = {}
        ahead = 0
        for group in groups:
            for label in group:
                places[label] = ahead + 1
            ahead += len(group)
        return [places[label] for label in LABELS[:n]]
    return None


def file_ranking(shown_places: list[int], order: list[int]) -> list[int]:
    """Places by shown label back in the file's response order."""
    ranking = [0] * len(order)
    for shown, index in enumerate(order):
        ranking[index] = shown_places[shown]
    return ranking


def image_paths(record: dict) -> list[str]:
    """The prompt's image paths: `images` (a list) or `image` (one path), as
    the file writes them (an imported record keeps its own key)."""
    if "images" in record:
        return list(record["images"] or [])
    return [record["image"]] if record.get("image") else []


def judge_records(text: str) -> list[dict]:
    """The release file's records as the runner sends them: {"ID", ...}."""
    out = []
    for line in text.splitlines():
        if line.strip():
            record = json.loads(line)
            out.append(
                {"ID": record["id"], "prompt": record.get("prompt", ""),
                 "images": image_paths(record), "responses": record["responses"]}
            )  # fmt: skip
    return out


def release_judge_records(release) -> list[dict]:
    from common.storage import read_stored
    from curation.releases import publishing

    try:
        data = read_stored(publishing.release_storage(), f"{release.folder}/{FILE}")
    except FileNotFoundError:
        raise EvaluationError(f"{FILE} is missing from the release's files.") from None
    return judge_records(data.decode("utf-8"))


def judge_calls(record: dict, seed: int, *, both_orders: bool) -> list[str]:
    return [CALL]


def messages(record: dict, seed: int, call: str, read_image: Callable[[str], bytes]) -> list:
    from curation.evaluation.judge_client import image_data_url

    n = len(record["responses"])
    order = shown_order(seed, record["ID"], call, n)
    labels = ", ".join(f"[[{c}]]" for c in LABELS[:n])
    system = SYSTEM_PROMPT.format(n=n, labels=labels, example=example(n))
    blocks = [
        BLOCK.format(label=LABELS[k], answer=record["responses"][index])
        for k, index in enumerate(order)
    ]
    text = "[User Question]\n" + record["prompt"] + "\n\n" + "\n\n".join(blocks)
    content: list[dict] | str = text
    if record["images"]:
        content = [{"type": "text", "text": text}]
        for path in record["images"]:
            url = image_data_url(read_image(f"{FOLDER}/{path}"), path)
            content.append({"type": "image_url", "image_url": {"url": url}})
    return [{"role": "system", "content": system}, {"role": "user", "content": content}]


def request_body(record: dict, read_image, endpoint: Any, *, call: str, seed: int) -> dict:
    return chat_request(endpoint, messages(record, seed, call, read_image))


def predictions(outputs: dict[tuple[str, str], str], records: list[dict], run) -> Upload:
    """The run's answers as a ranked predictions file: a ranking line per
    parsed verdict (file order); an unparseable one gets none (missing)."""
    lines = []
    for record in records:
        n = len(record["responses"])
        places = parse_ranking(outputs.get((record["ID"], CALL)), n)
        if places is None:
            continue
        order = shown_order(run.seed, record["ID"], CALL, n)
        lines.append({"id": record["ID"], "ranking": file_ranking(places, order)})
    if not lines:
        raise EvaluationError(
            "None of the judge's answers holds a ranking line such as "
            f"{example(4)!r}: nothing to score."
        )
    body = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    return Upload(predictions=body.encode(), filename=f"judge-run-{run.pk}.jsonl")
