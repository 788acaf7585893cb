"""What the benchmarks' judges share (pure: no Django import): the
chat-completions request every judge module sends, and the pairwise
``[[A]]``/``[[B]]`` verdict counted over both orders."""

from __future__ import annotations

from typing import Any


def chat_request(endpoint: Any, messages: list[dict]) -> dict:
    """The chat-completions request of `messages` to `endpoint` (its model and
    max_tokens; its temperature only when set)."""
    body: dict[str, Any] = {
        "model": endpoint.model,
        "messages": messages,
        "max_tokens": endpoint.max_tokens,
    }
    if endpoint.temperature is not None:
        body["temperature"] = endpoint.temperature
    return body


def pick(answer: str | None) -> str:
    """ "A", "B" or "" (no pick) of a judge's answer: A when it holds
    ``[[A]]`` and not ``[[B]]``, B alike."""
    if not answer:
        return ""
    a, b = "[[A]]" in answer, "[[B]]" in answer
    return "A" if a and not b else "B" if b and not a else ""


def votes_both_orders(original: str | None, swapped: str | None) -> tuple[int, int]:
    """(votes for the chosen, votes for the rejected) over the answers in
    both orders (``original``: the chosen shown as A)."""
    first, second = pick(original), pick(swapped)
    return (first == "A") + (second == "B"), (first == "B") + (second == "A")
