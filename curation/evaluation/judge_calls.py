"""The judge-call seam's rules (curation.benchmarks.base.OptionalMembers):
which calls a record gets and how often an unparsed answer is asked again.
The runner (curation.evaluation.judge_runs) sends and stores; no database
access here (the retries run in the runner's pool threads)."""

from __future__ import annotations

import dataclasses
import random

from curation.benchmarks.base import EvaluationError
from curation.evaluation import judge_client

MAX_CALL_KEY = 16  # JudgeOutput.order's length
ORIGINAL, SWAPPED = "original", "swapped"  # curation.models.JudgeOrder's passes


class BadCallKeys(EvaluationError):
    """A benchmark's judge_calls gave keys the runner cannot store."""


def calls_for(benchmark, record: dict, seed: int, both_orders: bool) -> list[str]:
    """The call keys of one record: the benchmark's `judge_calls`, else the
    passes ("original", and "swapped" when both orders run)."""
    if not hasattr(benchmark, "judge_calls"):
        return [ORIGINAL, SWAPPED] if both_orders else [ORIGINAL]
    calls = list(benchmark.judge_calls(record, seed, both_orders=both_orders))
    bad = [c for c in calls if not isinstance(c, str) or not 1 <= len(c) <= MAX_CALL_KEY]
    if bad or len(set(calls)) != len(calls):
        raise BadCallKeys(
            f"The benchmark {benchmark.key!r} gave record {record.get('ID')!r} the call keys "
            f"{calls!r}: each must be 1 to {MAX_CALL_KEY} characters and unique."
        )
    return calls


def sends(benchmark, both_orders: bool) -> str:
    """What a run sends per item, in words for the judge run form and a
    run's page: the benchmark's `judge_calls_help` when it decides its own
    calls (the swapped option means nothing then), else the orders."""
    if hasattr(benchmark, "judge_calls"):
        return getattr(benchmark, "judge_calls_help", "") or "the calls its benchmark decides"
    return "both orders" if both_orders else "original order only"


def retries_of(benchmark) -> int:
    """How many more times an unparsed answer is asked again (0: never)."""
    if not hasattr(benchmark, "judge_unparsed"):
        return 0
    return max(0, int(getattr(benchmark, "judge_retries", 0)))


def ask(benchmark, body: dict, endpoint, policy, stop) -> judge_client.JudgeResult:
    """Send one call; while its answer is unparsed (the benchmark's
    `judge_unparsed`), send it again, at most `judge_retries` more times.
    The last answer, with every attempt and second counted."""
    result = judge_client.judge(body, endpoint, policy, stop=stop, rng=random.Random())
    retries = retries_of(benchmark)
    attempts, seconds, asked = result.attempts, result.seconds, 0
    while not result.error and asked < retries and benchmark.judge_unparsed(result.output):
        asked += 1
        result = judge_client.judge(body, endpoint, policy, stop=stop, rng=random.Random())
        attempts += result.attempts
        seconds += result.seconds
    return dataclasses.replace(result, attempts=min(attempts, 32767), seconds=seconds)
