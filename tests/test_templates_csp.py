"""The Content-Security-Policy forbids inline script and style, so templates
must not contain any: scripts are files under static/js/, styles CSS classes.
This catches what the browser test (tests/e2e/test_csp_journey.py) would only
see on the pages it visits."""

import re
from pathlib import Path

import pytest

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
FILES = sorted(TEMPLATES.rglob("*.html"))

SCRIPT_TAG = re.compile(r"<script\b([^>]*)>(.*?)</script\s*>", re.IGNORECASE | re.DOTALL)
# onclick=, onload=, … as an attribute (after whitespace inside a tag).
EVENT_HANDLER = re.compile(r"<[a-z][^>]*\s(on[a-z]+)\s*=", re.IGNORECASE | re.DOTALL)
STYLE_ATTRIBUTE = re.compile(r"<[a-z][^>]*\sstyle\s*=", re.IGNORECASE | re.DOTALL)
STYLE_ELEMENT = re.compile(r"<style\b", re.IGNORECASE)
JS_URL = re.compile(r"""(href|src|action)\s*=\s*["']?\s*javascript:""", re.IGNORECASE)
# htmx attributes that run strings as code (refused with allowEval=false anyway).
HTMX_EVAL = re.compile(r"\shx-on[:-]|\shx-vars\s*=|hx-vals\s*=\s*['\"]\s*js:", re.IGNORECASE)


def rel(path: Path) -> str:
    return str(path.relative_to(TEMPLATES))


def test_there_are_templates_to_scan():
    assert len(FILES) > 10


def problems_in(text: str) -> list[str]:
    problems = []
    for attrs, body in SCRIPT_TAG.findall(text):
        if "src=" not in attrs or body.strip():
            problems.append(f"inline <script{attrs}>")
    problems += [f"event handler {m}=" for m in EVENT_HANDLER.findall(text)]
    problems += ["style= attribute"] * len(STYLE_ATTRIBUTE.findall(text))
    problems += ["<style> element"] * len(STYLE_ELEMENT.findall(text))
    problems += ["javascript: URL"] * len(JS_URL.findall(text))
    problems += ["htmx attribute that evaluates code"] * len(HTMX_EVAL.findall(text))
    return problems


@pytest.mark.parametrize("path", FILES, ids=rel)
def test_no_inline_script_handler_or_style(path):
    assert problems_in(path.read_text(encoding="utf-8")) == [], rel(path)


@pytest.mark.parametrize(
    "snippet",
    [
        "<script>alert(1)</script>",
        '<script src="/static/x.js">alert(1)</script>',
        '<button onclick="go()">x</button>',
        '<body onload="go()">',
        '<div class="x" style="color:red">',
        "<style>p{}</style>",
        '<a href="javascript:go()">x</a>',
        '<button hx-on:click="go()">x</button>',
    ],
)
def test_the_scan_catches_each_kind(snippet):
    assert len(problems_in(f"<p>{snippet}</p>")) == 1


def test_the_scan_allows_script_files():
    assert problems_in('<script src="/static/js/work.js" defer data-x="1"></script>') == []


def test_pages_that_load_htmx_switch_off_what_the_policy_refuses():
    base = (TEMPLATES / "base.html").read_text(encoding="utf-8")
    for path in [
        TEMPLATES / "base.html",
        *[p for p in FILES if "block htmx_config" in p.read_text()],
    ]:
        config = re.search(r'name="htmx-config" content=\'([^\']*)\'', path.read_text())
        assert config, rel(path)
        for setting in (
            '"includeIndicatorStyles": false',
            '"allowEval": false',
            '"attributesToSettle": ["class", "width", "height"]',
        ):
            assert setting in config.group(1), f"{rel(path)} lacks {setting}"
    assert "{% block htmx_config %}" in base
    # Templates that load htmx extend base.html (and so get its configuration).
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        if "htmx.min.js" in text:
            assert '{% extends "base.html" %}' in text, rel(path)
