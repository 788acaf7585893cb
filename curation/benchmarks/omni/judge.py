"""Judging a release's Omni-RewardBench records with an LLM as
``evaluation_experiments/run_exp.py`` does: a system prompt stating the
record's criterion and the verdict format ([[A]] / [[B]], and [[C]] for a tie
in the with-ties mode), a user message of the prompt (and its image) and
response A = response1, response B = response2 (texts, or images, videos or
audio for the media tasks) — except text_to_audio, whose published judge
(``run_exp_t2a.py``) shows response2 first and maps the verdict back: its
records are sent swapped and their predictions lines say ``"swapped": true``
(scoring maps the parsed side back). Audio goes as OpenAI-compatible
``input_audio`` (base64, format from the file's extension), video as the
run's sampled frames or a ``video_url`` data URL for endpoints that accept
one (curation.evaluation.media_content, the seam every judge uses). The wording is the
studio's own summary of the published templates (utils/prompts/<task>.py), whose
structure it follows.
No Django.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from curation.benchmarks.common.judge import chat_request

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


# Where a release holds the files its records name (release_files.FOLDER/MEDIA).
MEDIA_FOLDER = "omni/media_data"


def system_prompt(criteria: str, *, with_ties: bool) -> str:
    return SYSTEM.format(criteria=criteria) + (VERDICT_TIES if with_ties else VERDICT)


def content(record: dict, read_image: Callable[[str], bytes]) -> list[dict[str, Any]]:
    """The user message: the prompt (its image first) and A, B in the record's order."""
    from curation.evaluation.media_content import media_parts

    def media(path: str, kind: str) -> list[dict[str, Any]]:
        # The records' paths are relative to omni/media_data/, the reader's to the release.
        # A project's records name stored files (folder "": the path as it is).
        folder = record.get("folder", MEDIA_FOLDER)
        return media_parts(read_image, f"{folder}/{path}" if folder else path, kind)

    prompt_key, prompt_kind, response_kind = record.get("shape") or (
        "image" if record.get("image") else "", "image", "image" if record["image_responses"]
        else "text")  # fmt: skip
    out: list[dict[str, Any]] = [{"type": "text", "text": "[[PROMPT]]\n" + record["prompt"]}]
    if prompt_key and record.get(prompt_key):
        out += [{"type": "text", "text": f"[[{prompt_key.upper()}]]"},
                *media(record[prompt_key], prompt_kind)]  # fmt: skip
    for label, key in (("A", first(record)), ("B", second(record))):
        out.append({"type": "text", "text": f"[[RESPONSE {label}]]"})
        if response_kind != "text":
            out += media(record[key], response_kind)
        else:
            out.append({"type": "text", "text": record[key]})
    return out


def media_sent(record: dict, run) -> dict[str, Any]:
    """How the run sent the record's video, for its predictions line (a
    record without one: nothing)."""
    prompt_key, prompt_kind, response_kind = record.get("shape") or ("", "image", "text")
    if "video" not in ((prompt_kind if prompt_key else ""), response_kind):
        return {}
    video_as = getattr(run, "video_as", "frames")
    frames = {"video_frames": getattr(run, "video_frames", 8)} if video_as == "frames" else {}
    return {"video_as": video_as, **frames}


def swapped(record: dict) -> bool:
    """Whether the published judge shows this record's response2 first."""
    from annotate.importing.formats.omni import JUDGE_SWAPS

    return record.get("task") in JUDGE_SWAPS


def first(record: dict) -> str:
    return "response2" if swapped(record) else "response1"


def second(record: dict) -> str:
    return "response1" if swapped(record) else "response2"


def request_body(record: dict, read_image, endpoint: Any, *, with_ties: bool) -> dict:
    return chat_request(
        endpoint,
        [
            {"role": "system", "content": system_prompt(record["criteria"], with_ties=with_ties)},
            {"role": "user", "content": content(record, read_image)},
        ],
    )
