"""The Multimodal RewardBench judge prompt and request (facebookresearch/
multimodal_rewardbench, scripts/1_run_model_as_judge_gpt4o.py): one user
message, the prompt with the question and both answers, then the record's
image. No Django import; curation.evaluation.judge_runs sends it.

The script fills ``answer_a`` with ``Output1`` and ``answer_b`` with
``Output2`` (``judge_prompt.format(question=..., answer_a=..., answer_b=...)``)
and sends the image as a base64 data URL beside the text; the swapped pass
(position consistency, an extra) fills ``answer_a`` with ``Output2``.
"""

from __future__ import annotations

from curation.benchmarks.common.judge import chat_request
from curation.evaluation.judge_client import Endpoint, image_data_url

# Verbatim from facebookresearch/multimodal_rewardbench,
# scripts/1_run_model_as_judge_gpt4o.py (`judge_prompt`); the "\n" escapes are
# newlines there too (a plain, not raw, triple-quoted string).
JUDGE_PROMPT = (
    "Please act as an impartial judge and evaluate the quality of the responses provided by "
    "two AI assistants to the user question displayed below. You should choose the assistant "
    "that follows the user's instructions and answers the user's question better. Your "
    "evaluation should consider factors such as the helpfulness, relevance, accuracy, depth, "
    "creativity, and level of detail of their responses. Begin your evaluation by comparing the "
    "two responses and provide a short explanation. Avoid any position biases and ensure that "
    "the order in which the responses were presented does not influence your decision. Do not "
    "allow the length of the responses to influence your evaluation. Do not favor certain names "
    "of the assistants. Be as objective as possible. After providing your explanation, output "
    'your final verdict by strictly following this format: "[[A]]" if assistant A is better, '
    '"[[B]]" if assistant B is better.\n\n'
    "[User Question]\n{question}\n\n"
    "[The Start of Assistant A's Answer]\n{answer_a}\n[The End of Assistant A's Answer]\n\n"
    "[The Start of Assistant B's Answer]\n{answer_b}\n[The End of Assistant B's Answer]"
)


def build_prompt(record: dict, *, swapped: bool) -> str:
    first, second = ("Output2", "Output1") if swapped else ("Output1", "Output2")
    return JUDGE_PROMPT.format(
        question=record["Text"], answer_a=record[first], answer_b=record[second]
    )


def request_body(record: dict, image: bytes, endpoint: Endpoint, *, swapped: bool) -> dict:
    """The chat-completions request for one record; `image` is the bytes of
    the file the record's ``Image`` names. ``temperature`` is in the body
    only when the endpoint sets one: the benchmark's judge script sends none,
    so the server's default applies."""
    return chat_request(
        endpoint,
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": build_prompt(record, swapped=swapped)},
                    {
                        "type": "image_url",
                        "image_url": {"url": image_data_url(image, record["Image"])},
                    },
                ],
            }
        ],
    )
