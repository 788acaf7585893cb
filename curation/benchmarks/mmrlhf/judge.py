"""Judging a release's MM-RLHF-RewardBench pairs with an LLM (issue 34).
No Django import; curation.evaluation.judge_runs sends the requests.

The benchmark publishes a reward-model scorer, not a judge prompt, so the
studio asks as the Multimodal RewardBench judge does (its prompt, quoted
verbatim in curation.benchmarks.mrb.judge): one user message with the
question and both answers, then the prompt's image (a video's frames, in
order; at most ``VIDEO_FRAMES`` = 32 of them, sampled as the published
inference samples a frames folder: ``np.linspace(0, n - 1, 32, dtype=int)``
over the frames in order, see :func:`sampled_frames`). Every pair is asked
in both orders (``original``: chosen as A; ``swapped``: rejected as A). An
answer is A when it holds ``[[A]]`` and not ``[[B]]`` (and B alike); anything
else is no pick. The answers become the
pair's rewards: a vote for the chosen or the rejected per order that picked
it, so ``rewards[0] > rewards[1]`` (the published test) holds when the
orders picked the chosen more often than the rejected (both, or one and no
pick from the other); a split or no pick is a tie, which is wrong.
"""

from __future__ import annotations

import json

from curation.benchmarks.common.judge import chat_request, votes_both_orders
from curation.benchmarks.mrb.judge import JUDGE_PROMPT
from curation.evaluation.judge_client import Endpoint, image_data_url

# The published inference (r1_reward inference/MM-RLHF-Reward/r1_reward.py)
# gives a video's model this many frames of its folder.
VIDEO_FRAMES = 32


def sampled_frames(frames: list[str], n: int = VIDEO_FRAMES) -> list[str]:
    """The frames a judge is sent: every frame of a folder of at most `n`,
    else `n` of them at the published indices (``np.linspace(0, len - 1, n,
    dtype=int)``: evenly spread, first and last included). The published
    script repeats frames of a shorter folder to make up `n`; repeats tell a
    judge nothing, so a short folder is sent once over."""
    if len(frames) <= n:
        return list(frames)
    import numpy as np

    return [frames[i] for i in np.linspace(0, len(frames) - 1, n, dtype=int)]


def build_prompt(record: dict, *, swapped: bool) -> str:
    first, second = ("rejected", "chosen") if swapped else ("chosen", "rejected")
    return JUDGE_PROMPT.format(
        question=record["prompt"], answer_a=record[first], answer_b=record[second]
    )


def request_body(record: dict, read_image, endpoint: Endpoint, *, swapped: bool) -> dict:
    """The chat-completions request for one pair; `read_image(path)` reads a
    file of the release folder."""
    content: list[dict] = [{"type": "text", "text": build_prompt(record, swapped=swapped)}]
    for path in record["images"]:
        url = image_data_url(read_image(path), path)
        content.append({"type": "image_url", "image_url": {"url": url}})
    if record.get("media"):  # a project item's video or audio (a release's are frames)
        from curation.evaluation.media_content import media_parts

        for path, kind in record["media"]:
            content.extend(media_parts(read_image, path, kind))
    return chat_request(endpoint, [{"role": "user", "content": content}])


def rewards(original: str | None, swapped: str | None) -> list[int]:
    """[votes for the chosen, votes for the rejected] over both orders."""
    return list(votes_both_orders(original, swapped))


def predictions_lines(outputs: dict, records: list[dict]) -> bytes:
    """The predictions file of a judge run: one line per pair, in release order."""
    lines = []
    for r in records:
        got = rewards(outputs.get((r["ID"], "original")), outputs.get((r["ID"], "swapped")))
        lines.append(json.dumps({"id": r["id"], "rewards": got}, ensure_ascii=False))
    return ("\n".join(lines) + "\n").encode()
