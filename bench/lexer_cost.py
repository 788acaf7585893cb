"""Worst time of each allowed Pygments lexer on hostile code blocks.

    .venv/bin/python bench/lexer_cost.py [--size 100000]

For every lexer of annotate.rendering.ALLOWED_LEXERS, lexes blocks of
--size characters built from patterns known to hurt regex lexers (unclosed
strings and comments, long runs of one character, deep brackets, random
printable text, mixed quotes and backslashes) and prints the slowest pattern
per lexer; a pattern still lexing after --give-up seconds is stopped and
shown as ">N s". Then renders each lexer's slowest block through
render_markdown (with its time budget) to show the cut-off holds.
"""

from __future__ import annotations

import argparse
import os
import random
import string
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

from pygments.lexers import get_lexer_by_name  # noqa: E402

from annotate import rendering  # noqa: E402

UNITS = {
    "random": None,
    "quote": '"',
    "squote": "'",
    "backslash": "\\",
    "backslash-quote": '\\"',
    "triple-quote": '"""',
    "open-comment": "/*",
    "hash": "#",
    "dollar": "$",
    "brackets": "([{",
    "lt": "<",
    "tag": "<a ",
    "percent": "%",
    "colon": ": ",
    "dash-space": "- ",
    "at": "@",
    "backtick": "`",
    "star": "*",
    "amp": "&",
    "word-space": "a ",
    "newline": "\n",
    "digits": "1.",
    "e": "e",
    "indent": "  x:\n",
    "latex": "\\begin{",
    "brace": "{",
    "angle-quote": "<'",
}


def block(name: str, size: int, rng: random.Random) -> str:
    unit = UNITS[name]
    if unit is None:
        return "".join(rng.choice(string.printable) for _ in range(size))
    return (unit * (size // len(unit) + 1))[:size]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--give-up", type=float, default=10.0)
    parser.add_argument("--lexer", action="append", help="only these (repeatable)")
    args = parser.parse_args()
    rng = random.Random(7)
    worst = []
    for name in args.lexer or sorted(rendering.ALLOWED_LEXERS):
        lexer = get_lexer_by_name(name, **rendering._LEXER_OPTIONS.get(name, {}))
        times = []
        for pattern in UNITS:
            code = block(pattern, args.size, rng)
            started = time.perf_counter()
            for _ in lexer.get_tokens(code):
                if time.perf_counter() - started > args.give_up:
                    break
            times.append((time.perf_counter() - started, pattern))
        seconds, pattern = max(times)
        shown = f">{args.give_up:g}" if seconds > args.give_up else f"{seconds:.3f}"
        # The fence's content is the block and its final newline: `size` in all.
        text = f"```{name}\n{block(pattern, args.size - 1, rng)}\n```"
        started = time.perf_counter()
        html = rendering.render_markdown(text)
        took = time.perf_counter() - started
        plain = " (plain-text fallback)" if "Shown as plain text" in html else ""
        print(
            f"{name:11s} lexing worst {shown:>7s} s ({pattern}); "
            f"render_markdown {took:.3f} s{plain}",
            flush=True,
        )
        worst.append((took, name, pattern))
    took, name, pattern = max(worst)
    print(
        f"\nslowest render_markdown of a {args.size}-character block: {name} ({pattern}) "
        f"{took:.3f} s; budget RENDER_SECONDS={rendering.RENDER_SECONDS} s"
    )


if __name__ == "__main__":
    main()
