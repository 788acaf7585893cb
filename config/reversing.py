"""reverse() for the URLs every judgement builds, from a cached template.

Django's reverse() finds the pattern, checks the argument against its
converter and quotes it: about 0.1 ms a call on this project's benchmark
machine, four calls a judgement (the form's two actions, the pushed URL,
the history link). For a pattern with one argument, the URL is the same
every time but for the argument, so `reverse_one` asks reverse() once per
(script prefix, urlconf, name) for the URL of a marker value and afterwards
splices the argument in where the marker was. An argument the fast path
cannot vouch for goes to reverse() itself, which quotes it or raises
NoReverseMatch as usual: anything but plain ASCII letters, digits, `-` and
`_`; not digits for a pattern that takes only digits; and, only for a
pattern that takes a path (such as `<path:path>`, the media view's, which
every compare page and judgement reverses for the item's image), `/` and `.`
too, but never a leading `/`. Those characters are the ones reverse()
leaves unquoted, so the spliced URL is the one it would build.
"""

import re
from functools import lru_cache

from django.urls import NoReverseMatch, get_script_prefix, get_urlconf, reverse

_MARK = "987654321"
_WORD = re.compile(r"[-a-zA-Z0-9_]+")
_PATH = re.compile(r"[-a-zA-Z0-9_.][-a-zA-Z0-9_./]*")


@lru_cache(maxsize=128)
def _template(prefix: str, urlconf, name: str) -> tuple[str, str, bool, bool] | None:
    """(text before the argument, text after it, whether letters are
    accepted, whether paths are), or None when the marker does not appear
    exactly once."""
    del prefix  # part of the cache key only: reverse() reads it itself
    try:
        url = reverse(name, urlconf=urlconf, args=[_MARK])
    except NoReverseMatch:  # a pattern that refuses the marker: reverse() each time
        return None
    if url.count(_MARK) != 1:
        return None
    head, _, tail = url.partition(_MARK)
    return head, tail, _takes(urlconf, name, "x-"), _takes(urlconf, name, "x/y./")


def _takes(urlconf, name: str, before_mark: str) -> bool:
    """Whether the pattern takes `before_mark` + the marker and reverse()
    leaves it as it is."""
    try:
        url = reverse(name, urlconf=urlconf, args=[before_mark + _MARK])
    except NoReverseMatch:
        return False
    return before_mark + _MARK in url


def reverse_one(name: str, arg: object) -> str:
    """reverse(name, args=[arg]), without resolving the pattern each time."""
    urlconf = get_urlconf()
    parts = _template(get_script_prefix(), urlconf, name)
    value = str(arg)
    if parts is not None:
        head, tail, letters, paths = parts
        if _WORD.fullmatch(value):
            if letters or value.isdigit():
                return head + value + tail
        elif paths and _PATH.fullmatch(value):
            return head + value + tail
    return reverse(name, urlconf=urlconf, args=[arg])
