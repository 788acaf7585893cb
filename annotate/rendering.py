"""Markdown → safe HTML for untrusted prompts and model responses.

Responses and prompts come from datasets we do not control, so rendering is
defence in depth:

1. markdown-it-py parses CommonMark (+ tables, strikethrough) with raw HTML
   *disabled*, so ``<script>`` in the source is shown as text, and with a
   link validator that only accepts http(s) and mailto URLs.
2. Our own render rules emit only a small vocabulary of tags and classes:
   Pygments-highlighted code (CSS classes, never inline styles), math as
   escaped TeX in ``.math-inline`` / ``.math-display`` for KaTeX to typeset
   in the browser, images as links (a response must not make the browser
   fetch arbitrary URLs), table alignment as classes (no ``style=``, which a
   strict Content-Security-Policy would block anyway).
3. nh3 sanitises the final HTML against an explicit allow-list, so a bug in
   steps 1-2 still cannot produce a script, an event handler or a dangerous URL.

``render_markdown`` is pure and deterministic, so results are memoised.

Its cost is bounded too, since a dataset chooses both the text and the
language of each code fence: only an allow-list of Pygments lexers (the
languages VLM answers use; others are shown as plain code), code blocks
longer than ``HIGHLIGHT_MAX_CHARS`` are not highlighted, and each call has a
time budget (``RENDER_SECONDS``, shared by the fields of one item through
``render_budget``) checked between tokens: a text that exceeds it, or is
longer than ``RENDER_MAX_CHARS``, is stored as plain escaped paragraphs with
a note saying why (``PlainFallback``).
"""

from __future__ import annotations

import contextlib
import html
import io
import logging
import re
import threading
import time
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml, unescapeAll
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from mdit_py_plugins.dollarmath import dollarmath_plugin
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.token import STANDARD_TYPES
from pygments.util import ClassNotFound

# Stored HTML (ItemPart.html) is valid only for the renderer version it
# was made with: bump this whenever the output of render_markdown changes
# (parser options, render rules, the sanitiser's allow-lists, Pygments), and
# items re-render on their next view.
RENDERER_VERSION = 2

log = logging.getLogger(__name__)

# The lexers a code fence may pick, by the names and aliases models write
# (the info string is lower-cased first). Lexers that delegate to a lexer
# named by the input (Markdown's nested fences) have that switched off.
LEXER_ALIASES = {
    "python": "python", "py": "python", "python3": "python", "py3": "python",
    "javascript": "javascript", "js": "javascript", "jsx": "javascript",
    "node": "javascript", "mjs": "javascript",
    "typescript": "typescript", "ts": "typescript", "tsx": "typescript",
    "c": "c", "h": "c",
    "cpp": "cpp", "c++": "cpp", "cc": "cpp", "cxx": "cpp", "hpp": "cpp",
    "java": "java",
    "go": "go", "golang": "go",
    "rust": "rust", "rs": "rust",
    "sql": "sql",
    "bash": "bash", "sh": "bash", "shell": "bash", "zsh": "bash",
    "json": "json",
    "yaml": "yaml", "yml": "yaml",
    "html": "html", "htm": "html", "xhtml": "html",
    "css": "css",
    "latex": "latex", "tex": "latex",
    "markdown": "markdown", "md": "markdown",
    "text": "text", "txt": "text", "plaintext": "text", "plain": "text",
}  # fmt: skip
ALLOWED_LEXERS = frozenset(LEXER_ALIASES.values())
_LEXER_OPTIONS = {"markdown": {"handlecodeblocks": False}}

# Code blocks longer than this are shown unhighlighted.
HIGHLIGHT_MAX_CHARS = 100_000
# Texts longer than this are shown as plain paragraphs (datasets cap fields
# well below; this bounds what the Markdown parser is ever given).
RENDER_MAX_CHARS = 1_000_000
# Seconds one render_markdown call, or one render_budget() block, may take.
RENDER_SECONDS = 2.0

# Only these URLs become links; everything else stays literal text.
# Relative URLs are refused too: a response must not link into this app.
_ALLOWED_URL = re.compile(r"^(?:https?://|mailto:)", re.IGNORECASE)
LINK_REL = "nofollow noopener noreferrer"

# Inputs longer than this are rendered but not memoised, to bound the cache.
_CACHE_MAX_CHARS = 16 * 1024

_FORMATTER = HtmlFormatter(cssclass="highlight", wrapcode=True)
_PYGMENTS_CLASSES = frozenset(c for c in STANDARD_TYPES.values() if c)

_LAST_CLOSER_ATTR = "_latex_last_closer"

_ALIGN_CLASSES = {"left": "align-left", "center": "align-center", "right": "align-right"}

_ALLOWED_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6",
    "ul", "ol", "li", "blockquote", "pre", "code", "em", "strong", "s", "del",
    "table", "thead", "tbody", "tr", "th", "td", "a", "span", "div",
}  # fmt: skip
_ALLOWED_ATTRIBUTES = {
    # ``rel`` and ``target`` are forced by nh3 below, ``class`` by allowed_classes.
    "a": {"href", "title"},
    "ol": {"start"},
}
_ALLOWED_CLASSES = {
    "p": {"render-note"},
    "a": {"md-image"},
    "div": {"highlight", "math-display"},
    "span": {"math-inline", "math-display", *_PYGMENTS_CLASSES},
    "th": set(_ALIGN_CLASSES.values()),
    "td": set(_ALIGN_CLASSES.values()),
}


def _validate_link(url: str) -> bool:
    # markdown-it passes the normalised (entity-decoded, percent-encoded) URL,
    # so "java&#x09;script:" or "JAVASCRIPT:" arrive here already decoded.
    return bool(_ALLOWED_URL.match(url))


class PlainFallback(Exception):
    """Rendering went over its time or size budget; the text is shown plain."""


_budget = threading.local()  # .deadline: time.monotonic() value, or absent


@contextlib.contextmanager
def render_budget(seconds: float | None = None) -> Iterator[None]:
    """Every render_markdown call inside shares one deadline (an item's
    prompt and two responses); nested blocks keep the outer deadline."""
    if getattr(_budget, "deadline", None) is not None:
        yield
        return
    _budget.deadline = time.monotonic() + (RENDER_SECONDS if seconds is None else seconds)
    try:
        yield
    finally:
        _budget.deadline = None


def _check_deadline() -> None:
    deadline = getattr(_budget, "deadline", None)
    if deadline is not None and time.monotonic() > deadline:
        raise PlainFallback("rendering took longer than its time limit")


@lru_cache(maxsize=64)
def _lexer_for(lang: str) -> Lexer | None:
    name = LEXER_ALIASES.get(lang)
    if name is None:
        return None
    try:
        return get_lexer_by_name(name, **_LEXER_OPTIONS.get(name, {}))
    except ClassNotFound:
        return None


def _checked_tokens(tokens):
    """The lexer's tokens, with the deadline checked before each (several
    allowed lexers are quadratic on hostile input, token by token)."""
    for token in tokens:
        _check_deadline()
        yield token


def _render_fence(
    self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    _check_deadline()
    token = tokens[idx]
    info = unescapeAll(token.info).strip() if token.info else ""
    lang = info.split(maxsplit=1)[0].lower() if info else ""
    lexer = _lexer_for(lang) if lang and len(token.content) <= HIGHLIGHT_MAX_CHARS else None
    if lexer is None:
        return f"<pre><code>{escapeHtml(token.content)}</code></pre>\n"
    out = io.StringIO()
    _FORMATTER.format(_checked_tokens(lexer.get_tokens(token.content)), out)
    return out.getvalue()


def _render_link_open(
    self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    token.attrSet("rel", LINK_REL)
    token.attrSet("target", "_blank")
    return self.renderToken(tokens, idx, options, env)


def _render_image(
    self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    # Never emit <img>: loading it would let a response make the annotator's
    # browser fetch an arbitrary URL (tracking, intranet probing). Show a link.
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env).strip()
    label = f"image: {alt}" if alt else "image"
    src = str(token.attrGet("src") or "")
    return (
        f'<a class="md-image" href="{escapeHtml(src)}" rel="{LINK_REL}" target="_blank">'
        f"[{escapeHtml(label)}]</a>"
    )


def _render_math_inline(
    self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    return f'<span class="math-inline">{escapeHtml(tokens[idx].content)}</span>'


def _render_math_display_inline(
    self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    # Display math inside a paragraph must stay phrasing content (a <div>
    # inside <p> would be re-parented); KaTeX makes it a block itself.
    return f'<span class="math-display">{escapeHtml(tokens[idx].content)}</span>'


def _render_math_block(
    self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    return f'<div class="math-display">{escapeHtml(tokens[idx].content.strip())}</div>\n'


def _latex_delimiters(state: StateInline, silent: bool) -> bool:
    r"""``\(...\)`` inline and ``\[...\]`` display math, as many models write it.

    Runs before the backslash-escape rule; ``\\(`` is an escaped backslash
    followed by a parenthesis and is left alone (the escape rule eats ``\\``).
    """
    src, pos = state.src, state.pos
    if not src.startswith("\\", pos) or pos + 1 >= state.posMax:
        return False
    opener = src[pos + 1]
    if opener == "(":
        closer, token_type = "\\)", "math_inline"
    elif opener == "[":
        closer, token_type = "\\]", "math_inline_double"
    else:
        return False
    end = _find_closer(state, closer, pos + 2)
    if end == -1 or not src[pos + 2 : end].strip():
        return False
    if not silent:
        token = state.push(token_type, "math", 0)
        token.content = src[pos + 2 : end].strip()
        token.markup = "\\" + opener
    state.pos = end + 2
    return True


def _find_closer(state: StateInline, closer: str, start: int) -> int:
    # Without the memo of the last closer in this inline block, thousands of
    # unclosed "\\(" would each scan to the end: quadratic in the input.
    memo: dict[str, int] | None = getattr(state, _LAST_CLOSER_ATTR, None)
    if memo is None:
        memo = {}
        setattr(state, _LAST_CLOSER_ATTR, memo)
    if closer not in memo:
        memo[closer] = state.src.rfind(closer)
    if memo[closer] < start:
        return -1
    return state.src.find(closer, start, state.posMax)


def _alignment_as_classes(state: StateCore) -> None:
    # The table rule emits style="text-align:…"; a strict CSP forbids inline
    # styles and the sanitiser drops them, so turn them into classes.
    for token in state.tokens:
        if token.type in ("th_open", "td_open") and token.attrs:
            style = str(token.attrs.pop("style", ""))
            align = style.removeprefix("text-align:").strip()
            if align in _ALIGN_CLASSES:
                token.attrSet("class", _ALIGN_CLASSES[align])


def _build_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.validateLink = _validate_link  # type: ignore[method-assign]
    # Pandoc's rules for "$": no space inside the delimiters and no digit
    # right after the closing one, so "costs $5 and $10" stays text.
    dollarmath_plugin(
        md, allow_labels=False, allow_space=False, allow_digits=False, double_inline=True
    )
    md.inline.ruler.before("escape", "latex_delimiters", _latex_delimiters)
    md.core.ruler.push("alignment_as_classes", _alignment_as_classes)
    md.add_render_rule("fence", _render_fence)
    md.add_render_rule("link_open", _render_link_open)
    md.add_render_rule("image", _render_image)
    md.add_render_rule("math_inline", _render_math_inline)
    md.add_render_rule("math_inline_double", _render_math_display_inline)
    md.add_render_rule("math_block", _render_math_block)
    md.add_render_rule("math_block_label", _render_math_block)
    return md


_MD = _build_parser()


def sanitise_html(html: str) -> str:
    """Reduce HTML to the renderer's vocabulary; safe on arbitrary input."""
    return nh3.clean(
        html,
        tags=_ALLOWED_TAGS,
        clean_content_tags={"script", "style"},
        attributes=_ALLOWED_ATTRIBUTES,
        allowed_classes=_ALLOWED_CLASSES,
        url_schemes={"http", "https", "mailto"},
        url_relative="deny",
        link_rel=LINK_REL,
        set_tag_attribute_values={"a": {"target": "_blank"}},
        strip_comments=True,
    )


@lru_cache(maxsize=256)
def _render_cached(text: str) -> str:  # a PlainFallback raised is not cached
    return _render(text)


def _render(text: str) -> str:
    if len(text) > RENDER_MAX_CHARS:
        raise PlainFallback(f"the text is longer than {RENDER_MAX_CHARS:,} characters")
    tokens = _MD.parse(text)
    _check_deadline()
    rendered = _MD.renderer.render(tokens, _MD.options, {})
    _check_deadline()
    sanitised = sanitise_html(rendered)
    # Checked once more after the last step: a text whose lexing finished
    # just inside the budget but whose formatting and sanitising ran past it
    # is stored plain too, so nothing over the budget is ever stored rendered.
    _check_deadline()
    return sanitised


def plain_html(text: str, reason: str) -> str:
    """`text` as escaped paragraphs (line breaks kept), after a note saying
    why it is not formatted."""
    note = f'<p class="render-note"><em>Shown as plain text: {html.escape(reason)}.</em></p>'
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    body = "".join(
        "<p>" + "<br>".join(html.escape(line) for line in p.split("\n")) + "</p>"
        for p in paragraphs
    )
    return sanitise_html(note + body)


def render_markdown(text: str) -> SafeString:
    """Render untrusted Markdown to sanitised HTML that is safe to embed,
    within the time budget of the enclosing render_budget() (or its own)."""
    if not text:
        return mark_safe("")
    with render_budget():
        try:
            if len(text) > _CACHE_MAX_CHARS:
                return mark_safe(_render(text))
            return mark_safe(_render_cached(text))
        except PlainFallback as exc:
            log.warning("rendered as plain text (%d characters): %s", len(text), exc)
            return mark_safe(plain_html(text, str(exc)))
