"""Reasoning, coding: predict a program's output, write code for a table in the
image, fix a bug. Answers carry Markdown code blocks."""

from __future__ import annotations

import math
import random

from demo.drawing import draw_code, draw_table
from demo.items import Draft
from demo.subjects import NAMES, pick_size


def rs_code_output(rng: random.Random) -> Draft:
    kind = rng.randrange(3)
    if kind == 0:
        nums = rng.sample(range(1, 30), 6)
        lines = [
            f"nums = {nums}",
            "total = 0",
            "for n in nums:",
            "    if n % 2 == 0:",
            "        total += n",
            "print(total)",
        ]
        evens = [n for n in nums if n % 2 == 0]
        answer = sum(evens)
        explain = (
            f"The loop adds only the even numbers ({', '.join(map(str, evens)) or 'none'}), so "
            f"`total` ends as {answer}."
        )
        wrong = sum(n for n in nums if n % 2 == 1)
        wrong_explain = (
            "The loop adds the odd numbers, because `n % 2 == 0` checks for a remainder."
        )
    elif kind == 1:
        k = rng.randint(4, 7)
        lines = [
            "def f(n):",
            "    if n <= 1:",
            "        return 1",
            "    return n * f(n - 1)",
            "",
            f"print(f({k}))",
        ]
        answer = math.factorial(k)
        explain = f"`f` is a recursive factorial, so `f({k})` = {k}! = {answer}."
        wrong = math.factorial(k - 1)
        wrong_explain = f"The recursion stops one step early, so it computes {k - 1}!."
    else:
        words = rng.sample(["kiwi", "banana", "fig", "cherry", "apple", "plum", "mango", "date"], 5)
        lines = [
            f"words = {words}",
            "short = [w.upper() for w in words if len(w) <= 4]",
            "print(len(short), short[0])",
        ]
        # Four of the eight words have at most four letters, so `short` is never empty.
        short = [w.upper() for w in words if len(w) <= 4]
        answer = f"{len(short)} {short[0]}"
        explain = (
            f"The comprehension keeps words of at most 4 letters ({', '.join(short)}) in upper "
            f"case, so it prints the count and the first one."
        )
        wrong = f"{len(short) + 1} {short[0].lower()}"
        wrong_explain = "The list keeps words with 4 or more letters, in their original case."
    img = draw_code(
        lines, (rng.choice([520, 560, 600]), max(300, 110 + 22 * len(lines))), "snippet.py"
    )
    prompt = "What does this Python code print? Explain briefly."
    code = "\n".join(lines)
    good = f"It prints:\n\n```\n{answer}\n```\n\n{explain}"
    alt = f"Output: `{answer}`. {explain}"
    bad = f"It prints `{wrong}`.\n\n{wrong_explain}\n\n```python\n{code}\n```"
    return Draft("code", prompt, img, good, bad, alt)


def rs_code_table(rng: random.Random) -> Draft:
    names = rng.sample(NAMES, 5)
    scores = [[rng.randint(45, 99) for _ in range(3)] for _ in names]
    col = rng.randrange(3)
    subjects = ["Math", "Science", "English"]
    rows = [[n, *map(str, sc)] for n, sc in zip(names, scores, strict=True)]
    img = draw_table(["Student", *subjects], rows, pick_size(rng), title="Test scores")
    values = [sc[col] for sc in scores]
    mean = sum(values) / len(values)
    data = ",\n".join(f'    "{n}": {sc}' for n, sc in zip(names, scores, strict=True))
    prompt = (
        f"Write Python code that stores this table and prints the average {subjects[col]} "
        "score and the student with the highest one."
    )
    good = (
        "```python\n"
        f"scores = {{\n{data},\n}}\n"
        f'SUBJECTS = ["Math", "Science", "English"]\n'
        f'col = SUBJECTS.index("{subjects[col]}")\n\n'
        "average = sum(row[col] for row in scores.values()) / len(scores)\n"
        "best = max(scores, key=lambda name: scores[name][col])\n"
        f'print(f"Average {subjects[col]}: {{average:.1f}}")\n'
        f'print(f"Top student: {{best}}")\n'
        "```\n\n"
        f"This prints an average of {mean:.1f} and {names[values.index(max(values))]} as the "
        "top student."
    )
    alt = (
        "```python\n"
        "rows = [\n"
        + "\n".join(
            f'    ("{n}", {", ".join(map(str, sc))}),' for n, sc in zip(names, scores, strict=True)
        )
        + "\n]\n"
        f"values = [row[{col + 1}] for row in rows]\n"
        "print(sum(values) / len(values))\n"
        f"print(max(rows, key=lambda row: row[{col + 1}])[0])\n"
        "```\n\n"
        f"Output: `{mean}` and `{names[values.index(max(values))]}`."
    )
    bad = (
        "```python\n"
        f"scores = {{\n{data},\n}}\n"
        f"average = sum(row[{col + 1 if col < 2 else 0}] for row in scores.values()) / "
        f"(len(scores) - 1)\n"
        "best = max(scores)\n"
        "print(average, best)\n"
        "```\n\n"
        "This gives the average and the best student."
    )
    return Draft("code", prompt, img, good, bad, alt)


def rs_code_fix(rng: random.Random) -> Draft:
    n = rng.randint(5, 12)
    lines = [
        "def average(values):",
        "    total = 0",
        "    for i in range(1, len(values)):",
        "        total += values[i]",
        "    return total / len(values)",
        "",
        f"print(average(list(range({n}))))",
    ]
    img = draw_code(
        lines, (rng.choice([520, 560, 600]), max(300, 110 + 22 * len(lines))), "stats.py"
    )
    expected = sum(range(n)) / n
    prompt = rng.choice(
        [
            "This function should return the mean of a list, but some results look wrong. Find "
            "and fix the bug.",
            "Is there a bug in this code? Fix it.",
        ]
    )
    good = (
        "The loop starts at index 1, so the first element is skipped. Iterate over every "
        "value (and guard against an empty list):\n\n"
        "```python\n"
        "def average(values):\n"
        "    if not values:\n"
        '        raise ValueError("average() of an empty list")\n'
        "    return sum(values) / len(values)\n"
        "```\n\n"
        f"Here `range({n})` starts with 0, so the output happens to be unchanged "
        f"({expected}); with a list like `[4, 6]` the buggy version returns 3.0 instead of "
        "5.0."
    )
    alt = (
        "Bug: `range(1, len(values))` skips `values[0]`. Fix:\n\n"
        "```python\n"
        "def average(values):\n"
        "    total = 0\n"
        "    for v in values:\n"
        "        total += v\n"
        "    return total / len(values)\n"
        "```"
    )
    bad = (
        "The division is the problem; divide by `len(values) - 1` since the loop skips one "
        "element:\n\n"
        "```python\n"
        "def average(values):\n"
        "    total = 0\n"
        "    for i in range(1, len(values)):\n"
        "        total += values[i]\n"
        "    return total / (len(values) - 1)\n"
        "```"
    )
    return Draft("code", prompt, img, good, bad, alt)
