"""Judging a release's VideoRewardBench-style samples with an LLM (issue 35).
No Django import; curation.evaluation.judge_runs sends the requests.

No judge prompt is published with the benchmark, so the studio asks one user
message: the question, both answers, then the video as every judge sends one
(curation.evaluation.media_content: the run's sampled frames, or a
``video_url`` data URL for endpoints that accept one). Every sample is
asked in both orders (``original``: chosen as A; ``swapped``: rejected as
A). An answer is A when it holds ``[[A]]`` and not ``[[B]]`` (and B alike);
anything else is no pick. The answers become the sample's scores: a vote
for the chosen or the rejected per order that picked it, so
``chosen_score > rejected_score`` holds when the orders picked the chosen
more often (both, or one and no pick from the other); a split or no pick is
a tie, which is wrong.
"""

from __future__ import annotations

import json
from typing import Any

from curation.benchmarks.common.judge import chat_request, votes_both_orders

PROMPT = (
    "Watch the video and read the question about it, then compare the two answers. "
    "Judge which answer is more accurate, helpful and safe for this video and question; "
    "do not let the order of the answers or their length sway you. Explain briefly, then "
    'give your verdict on the last line exactly as "[[A]]" if answer A is better or '
    '"[[B]]" if answer B is better.\n\n'
    "[Question]\n{question}\n\n[Answer A]\n{answer_a}\n\n[Answer B]\n{answer_b}"
)


def build_prompt(record: dict, *, swapped: bool) -> str:
    first, second = ("rejected", "chosen") if swapped else ("chosen", "rejected")
    return PROMPT.format(question=record["prompt"], answer_a=record[first],
                         answer_b=record[second])  # fmt: skip


def request_body(record: dict, read_file, endpoint: Any, *, swapped: bool) -> dict:
    """The chat-completions request for one sample; `read_file(path)` reads
    a file of the release folder."""
    from curation.evaluation.media_content import media_parts

    content: list[dict] = [
        {"type": "text", "text": build_prompt(record, swapped=swapped)},
        *media_parts(read_file, record["video"], "video"),
    ]
    return chat_request(endpoint, [{"role": "user", "content": content}])


def predictions_lines(outputs: dict, records: list[dict]) -> bytes:
    """The predictions file of a judge run: one line per sample, in release order."""
    lines = []
    for r in records:
        chosen, rejected = votes_both_orders(outputs.get((r["ID"], "original")),
                                  outputs.get((r["ID"], "swapped")))  # fmt: skip
        lines.append(json.dumps({"id": r["ID"], "chosen_score": chosen,
                                 "rejected_score": rejected}, ensure_ascii=False))  # fmt: skip
    return ("\n".join(lines) + "\n").encode()
