"""Asking a judge about one Multimodal RewardBench 2 pair, in one order. No
Django import: curation.evaluation.judge_runs feeds it the release's
`mmrb2/<task>.json` pairs and stores what comes back.

The request is one user message whose content list is built from the pair's
parts in the layout of the benchmark's own judges (an instruction, then
``[ORIGINAL PROMPT TO MODEL:]`` and the prompt's parts, ``[RESPONSE A:]`` and
the response shown first, ``[RESPONSE B:]`` and the other): text parts as
``{"type": "text"}``, image parts as ``{"type": "image_url"}`` with a base64
data URL, in the OpenAI-style list the MRB judge already sends; video and
audio parts as the run sends them (curation.evaluation.media_content). The
*forward* pass shows response A first; the *reverse* pass shows response B
first, so its verdict is about swapped sides and the scorer flips it
(curation.benchmarks.mmrb2.scoring).

Only content goes out: never a pair ID, a model name or a prompt source (a
published reasoning ID names the chosen model first).

The verdict is read from the answer as the benchmark's judges ask for it,
a JSON object whose ``better_response`` is ``"A"`` or ``"B"`` (code fences
allowed), or else a ``[[A]]`` / ``[[B]]`` marker (``[[A]]`` checked first, as
the MRB scorer does). Anything else is no verdict: the judgement is stored as
null, which the MMRB2 scorer skips (neither right nor wrong).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from curation.benchmarks.common.judge import chat_request
from curation.evaluation.judge_client import Endpoint
from curation.evaluation.media_content import media_parts

INSTRUCTION = (
    "You are an impartial expert judge of AI-generated responses, which may contain text "
    "and images. Two AI assistants answered the same prompt; compare their responses. "
    "Judge how faithfully each follows the prompt (and any input image), the quality and "
    "correctness of its text and images, and how well text and images fit together. Avoid "
    "any position bias: the order in which the responses are shown must not influence your "
    "decision, nor must their length. Begin with a short explanation, then end your answer "
    'with a JSON object {"better_response": "A"} if response A is better or '
    '{"better_response": "B"} if response B is better.'
)
TASK_FOCUS = {
    "t2i": "The task is text-to-image generation.",
    "edit": "The task is image editing: the prompt's image is the input to edit.",
    "interleaved": "The task is interleaved generation of text and images.",
    "reasoning": "The task is multimodal reasoning: judge the correctness of the reasoning.",
}
DIRECTIONS = ("forward", "reverse")
# Objects tried from the end of an answer: a verdict object is at or near its end.
MAX_JSON_TRIES = 20

_FENCE = re.compile(r"^```(?:json)?\s*\n?|\n?```\s*$")
_BETTER = re.compile(r'"better_response"\s*:\s*"([AB])"')


def _parts(content: list, read_image: Callable[[str], bytes]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for kind, value in content:
        if kind in ("image", "video", "audio"):  # the run's way (media_content)
            out += media_parts(read_image, value, kind)
        else:
            out.append({"type": "text", "text": value})
    return out


def content_list(
    pair: dict, task: str, read_image: Callable[[str], bytes], *, direction: str
) -> list[dict[str, Any]]:
    """The message content for one pair in one direction. `read_image` gets
    an image path as the task file writes it (relative to its folder)."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    first, second = ("response_a", "response_b")
    if direction == "reverse":
        first, second = second, first
    instruction = INSTRUCTION
    if task in TASK_FOCUS:
        instruction = f"{INSTRUCTION} {TASK_FOCUS[task]}"
    return [
        {"type": "text", "text": instruction},
        {"type": "text", "text": "[ORIGINAL PROMPT TO MODEL:]"},
        *_parts(pair["prompt_content"], read_image),
        {"type": "text", "text": "[RESPONSE A:]"},
        *_parts(pair[first]["response_content"], read_image),
        {"type": "text", "text": "[RESPONSE B:]"},
        *_parts(pair[second]["response_content"], read_image),
    ]


def request_body(content: list[dict[str, Any]], endpoint: Endpoint) -> dict:
    """The chat-completions request (temperature only when set, as for MRB)."""
    return chat_request(endpoint, [{"role": "user", "content": content}])


def parse_verdict(text: str) -> str | None:
    """ "A", "B" or None (no verdict) from a judge's answer: see the module
    docstring."""
    stripped = _FENCE.sub("", text.strip())
    start = stripped.rfind("{")
    tries = 0
    while start != -1 and tries < MAX_JSON_TRIES:
        tries += 1
        try:
            value, _ = json.JSONDecoder().raw_decode(stripped, start)
        except ValueError:
            value = None
        if isinstance(value, dict) and value.get("better_response") in ("A", "B"):
            return value["better_response"]
        start = stripped.rfind("{", 0, start)
    found = _BETTER.findall(stripped)
    if found:
        return found[-1]
    if "[[A]]" in text:
        return "A"
    if "[[B]]" in text:
        return "B"
    return None


def predictions_entry(forward: str | None, reverse: str | None) -> dict[str, Any]:
    """One pair's entry of a predictions file from the two passes' answers
    (None: that pass has no answer), the way an uploaded file carries it."""
    entry: dict[str, Any] = {}
    for direction, text in (("forward", forward), ("reverse", reverse)):
        if text is not None:
            entry[direction] = [{"judgement": parse_verdict(text), "output": text}]
    return entry
