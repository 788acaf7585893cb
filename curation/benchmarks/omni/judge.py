"""Judging a release's Omni-RewardBench records with an LLM as
``evaluation_experiments/run_exp.py`` does: a system prompt stating the
record's criterion and the verdict format ([[A]] / [[B]], and [[C]] for a tie
in the with-ties mode), a user message of the prompt (and its image) and
response A = response1, response B = response2 (never swapped; texts, or
images for the image tasks). The wording is the studio's own summary of the
published templates (utils/prompts/<task>.py), whose structure it follows.
No Django.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

SYSTEM = (
    "You are a helpful assistant that judges two AI responses to one user prompt "
    "([[PROMPT]]), response A ([[RESPONSE A]]) and response B ([[RESPONSE B]]), by this "
    "criterion alone, ignoring other aspects of the answers:\n\n{criteria}\n\n"
    "Be objective and do not let the order of the responses bias you. Explain your "
    "reasoning, then give your final verdict strictly in this format: "
)
VERDICT = '"[[A]]" if response A is better, "[[B]]" if response B is better.'
VERDICT_TIES = (
    '"[[A]]" if response A is better, "[[B]]" if response B is better, "[[C]]" if you '
    "cannot decide which one is better (or they are equal). Try to be decisive."
)


def system_prompt(criteria: str, *, with_ties: bool) -> str:
    return SYSTEM.format(criteria=criteria) + (VERDICT_TIES if with_ties else VERDICT)


def content(record: dict, read_image: Callable[[str], bytes]) -> list[dict[str, Any]]:
    """The user message: the prompt (its image first) and A, B in the record's order."""
    from curation.evaluation.judge_client import image_data_url

    def image(path: str) -> dict[str, Any]:
        url = image_data_url(read_image(path), path)
        return {"type": "image_url", "image_url": {"url": url}}

    out: list[dict[str, Any]] = [{"type": "text", "text": "[[PROMPT]]\n" + record["prompt"]}]
    if record.get("image"):
        out += [{"type": "text", "text": "[[IMAGE]]"}, image(record["image"])]
    for label, key in (("A", "response1"), ("B", "response2")):
        out.append({"type": "text", "text": f"[[RESPONSE {label}]]"})
        if record["image_responses"]:
            out.append(image(record[key]))
        else:
            out.append({"type": "text", "text": record[key]})
    return out


def request_body(record: dict, read_image, endpoint: Any, *, with_ties: bool) -> dict:
    body: dict[str, Any] = {
        "model": endpoint.model,
        "messages": [
            {"role": "system", "content": system_prompt(record["criteria"], with_ties=with_ties)},
            {"role": "user", "content": content(record, read_image)},
        ],
        "max_tokens": endpoint.max_tokens,
    }
    if endpoint.temperature is not None:
        body["temperature"] = endpoint.temperature
    return body
