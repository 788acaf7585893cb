"""Judging a release's VL-RewardBench pairs as the official
``inference_hf.py`` does (vl-rewardbench/VL_RewardBench; its prompt from
``prompt.py``, quoted verbatim). No Django.

The script sends every pair k times (``--k``, default 10: ``for _ in
range(k)``), each time with ``random_number = random.choice([0, 1])``
(unseeded) choosing the order: ``answers = [response[0], response[1]] if
random_number == 0 else [response[1], response[0]]``; the prompt has
``.replace("<image>\\n","")`` applied and goes with the image as
``data:image/png;base64,…``, ``temperature=0.2, top_p=0.2``. Here the k calls
of a pair are "run1".."run10" and each one's random_number is drawn from
``random.Random(f"{seed}:{pair id}:{call}")`` (the run's seed), so a resumed
run sends the same requests and scoring re-derives each swap
(:func:`random_number`). Each call's answer becomes one run of the pair's
predictions line (scoring.PREDICTIONS_SHAPE).
"""

from __future__ import annotations

import base64
import json
import random
from typing import Any

JUDGE_RUNS = 10  # inference_hf.py: parser.add_argument('--k', type=int, default=10)
CALLS = tuple(f"run{n}" for n in range(1, JUDGE_RUNS + 1))
TEMPERATURE = TOP_P = 0.2  # vllm_openai(..., temperature=0.2, top_p=0.2)

# Verbatim from prompt.py (an f-string; it starts with a space).
PROMPT = """ You are a highly capable multimodal AI assistant tasked with evaluating answers to visual questions. Please analyze the following image and question, then determine which of the two provided answers is better.

Question: {query}

Answer 1: {answer_1}

Answer 2: {answer_2}

Please evaluate both answers based on the following criteria:
1. Accuracy: How well does the answer align with the visual information in the image?
2. Completeness: Does the answer fully address all aspects of the question?
3. Clarity: Is the answer easy to understand and well-articulated?
4. Relevance: Does the answer directly relate to the question and the image?

After your evaluation, please:
1. Explain your reasoning for each criterion.
2. Provide an overall judgment on which answer is better (Answer 1 or Answer 2). For example: Overall Judgment: Answer X is better.

Your response should be structured and detailed, demonstrating your understanding of both the visual and textual elements of the task."""  # noqa: E501


def random_number(seed: int, pair_id: str, call: str) -> int:
    """The call's order: 0 shows response[0] as Answer 1, 1 swaps them."""
    return random.Random(f"{seed}:{pair_id}:{call}").choice([0, 1])


def build_prompt(record: dict, number: int) -> str:
    first, second = record["response"] if number == 0 else reversed(record["response"])
    text = PROMPT.format(query=record["query"], answer_1=first, answer_2=second)
    return text.replace("<image>\n", "")


def request_body(record: dict, image: bytes | None, endpoint: Any, *, number: int) -> dict:
    """The chat-completions request of one call. The script's temperature and
    top_p (0.2) unless the endpoint sets a temperature; the endpoint's
    max_tokens (the script's is 2048)."""
    content: list[dict] = [{"type": "text", "text": build_prompt(record, number)}]
    if image is not None:
        url = "data:image/png;base64," + base64.b64encode(image).decode("ascii")
        content.append({"type": "image_url", "image_url": {"url": url}})
    temperature = TEMPERATURE if endpoint.temperature is None else endpoint.temperature
    return {
        "model": endpoint.model,
        "messages": [{"role": "user", "content": content}],
        "temperature": temperature,
        "top_p": TOP_P,
        "max_tokens": endpoint.max_tokens,
    }


# A runner without the judge-call seam asks once per order (judge_request).
ORDERS = {"original": 0, "swapped": 1}


def predictions_lines(outputs: dict[tuple[str, str], str], records: list[dict], seed: int) -> bytes:
    """A run's answers ({(pair ID, call): text}) as a predictions file: one
    line per pair with an answer, its runs in call order, each with the
    random_number its call was sent with (re-derived from the seed; an
    "original"/"swapped" answer: 0/1)."""
    lines = []
    for record in records:
        pair_id = record["ID"]
        numbers = {call: random_number(seed, pair_id, call) for call in CALLS} | ORDERS
        runs = [
            {"call": call, "output": outputs[(pair_id, call)], "random_number": number}
            for call, number in numbers.items()
            if (pair_id, call) in outputs
        ]
        if runs:
            lines.append(json.dumps({"id": pair_id, "runs": runs}, ensure_ascii=False))
    return "".join(line + "\n" for line in lines).encode()
