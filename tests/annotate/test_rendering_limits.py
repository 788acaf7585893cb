"""Rendering with a bounded cost: only allow-listed lexers, a size limit for
highlighting, and one time budget per item, past which the text is stored
plain and escaped with a note saying why."""

from __future__ import annotations

import time

import pytest

from annotate import rendering
from annotate.models import ItemPart, parts_by_slot
from annotate.models.parts import render_parts_html
from annotate.rendering import render_budget, render_markdown
from tests.factories import make_item

# The quadratic case of Pygments' Java lexer (its method-declaration rule
# scans to the end of the text from every word): ~7 s for 10 kB here.
# Quadratic in Pygments' Java lexer: about 2 s under Pygments 2.21 on a
# loaded two-core machine (7 s under older releases), far over the 0.3 s
# budgets below.
SLOW_JAVA = "```java\n" + "a " * 9000 + "\n```"


@pytest.fixture(autouse=True)
def _fresh_render_cache():
    """A text rendered in full by an earlier test (or by a factory, inside the
    default budget) would come back from the cache without being lexed."""
    rendering._render_cached.cache_clear()
    yield
    rendering._render_cached.cache_clear()


@pytest.mark.parametrize(
    "lang", ["python", "py", "js", "typescript", "c++", "golang", "rs", "sh", "yml", "tex", "md"]
)
def test_allowed_languages_are_highlighted(lang):
    html = render_markdown(f"```{lang}\nx = 1 # note\n```")
    assert '<div class="highlight">' in html and "<span" in html


@pytest.mark.parametrize("lang", ["perl", "scheme", "ragel", "php", "haskell", "xml", "lisp"])
def test_other_languages_are_shown_as_plain_code(lang):
    html = render_markdown(f"```{lang}\n(define x 1) <b>\n```")
    assert html == "<pre><code>(define x 1) &lt;b&gt;\n</code></pre>\n"


def test_markdown_code_does_not_pick_a_lexer_for_its_own_fences():
    html = render_markdown("````markdown\n```perl\nmy $x = 1;\n```\n````")
    assert "highlight" in html
    # With nested fences handled, Perl's lexer would mark "my" as a keyword.
    assert '<span class="k">my</span>' not in html


def test_a_code_block_over_the_highlight_limit_is_plain(monkeypatch):
    monkeypatch.setattr(rendering, "HIGHLIGHT_MAX_CHARS", 100)
    html = render_markdown("```python\n" + "x = 1\n" * 40 + "```")
    assert html.startswith("<pre><code>x = 1\n") and "highlight" not in html


def test_a_render_over_its_time_budget_is_stored_plain_and_says_why(monkeypatch):
    monkeypatch.setattr(rendering, "RENDER_SECONDS", 0.3)
    text = "Here is <script>alert(1)</script> **code**:\n\n" + SLOW_JAVA
    started = time.monotonic()
    html = render_markdown(text)
    assert time.monotonic() - started < 1.5
    assert html.startswith(
        '<p class="render-note"><em>Shown as plain text: rendering took longer than its '
        "time limit.</em></p>"
    )
    assert "&lt;script&gt;alert(1)&lt;/script&gt; **code**:" in html
    assert "<script" not in html and "<strong>" not in html


def test_a_text_over_the_size_limit_is_plain(monkeypatch):
    monkeypatch.setattr(rendering, "RENDER_MAX_CHARS", 50)
    html = render_markdown("**bold** " * 10)
    assert "Shown as plain text: the text is longer than 50 characters" in html
    assert "<strong>" not in html


def test_one_budget_covers_an_items_three_texts(monkeypatch):
    monkeypatch.setattr(rendering, "RENDER_SECONDS", 0.3)
    started = time.monotonic()
    with render_budget():
        first = render_markdown(SLOW_JAVA)
        second = render_markdown(SLOW_JAVA + " ")
    assert time.monotonic() - started < 1.5  # not 0.3 s each, and far from 7 s each
    assert "Shown as plain text" in first and "Shown as plain text" in second


@pytest.mark.django_db
def test_the_worker_stores_a_plain_version_of_an_item_over_budget(monkeypatch):
    monkeypatch.setattr(rendering, "RENDER_SECONDS", 0.3)
    item = make_item(response_1=SLOW_JAVA, response_2="**fine**")
    ItemPart.objects.filter(item=item).update(rendered_version=0)
    started = time.monotonic()
    assert render_parts_html(item_ids=[item.pk]) == 3  # the three text parts
    assert time.monotonic() - started < 1.5
    part = ItemPart.objects.get(item=item, slot="response_1")
    assert part.rendered_version == rendering.RENDERER_VERSION
    assert "Shown as plain text: rendering took longer" in part.html
    assert parts_by_slot(item)["response_1"][0].html == part.html


@pytest.mark.django_db
def test_the_first_view_of_an_item_over_budget_is_bounded_too(monkeypatch):
    monkeypatch.setattr(rendering, "RENDER_SECONDS", 0.3)
    item = make_item(prompt=SLOW_JAVA)
    ItemPart.objects.filter(item=item).update(rendered_version=0)
    started = time.monotonic()
    html = parts_by_slot(item)["prompt"][1].html
    assert time.monotonic() - started < 1.5 and "Shown as plain text" in html
