"""reverse() for the URLs every judgement builds, from a cached template.

Django's reverse() finds the pattern, checks the argument against its
converter and quotes it: about 0.1 ms a call on this project's benchmark
machine, four calls a judgement (the form's two actions, the pushed URL,
the history link). For a pattern with one argument, the URL is the same
every time but for the argument, so `reverse_one` asks reverse() once per
(script prefix, urlconf, name) for the URL of a marker value and afterwards
splices the argument in where the marker was. An argument the fast path
cannot vouch for (not plain ASCII letters, digits, `-` or `_`, or not digits
for a pattern that takes only digits) goes to reverse() itself, which
quotes it or raises NoReverseMatch as usual.
"""

import re
from functools import lru_cache

from django.urls import NoReverseMatch, get_script_prefix, get_urlconf, reverse

_MARK = "987654321"
_WORD = re.compile(r"[-a-zA-Z0-9_]+")


@lru_cache(maxsize=128)
def _template(prefix: str, urlconf, name: str) -> tuple[str, str, bool] | None:
    """(text before the argument, text after it, whether letters are
    accepted), or None when the marker does not appear exactly once."""
    del prefix  # part of the cache key only: reverse() reads it itself
    try:
        url = reverse(name, urlconf=urlconf, args=[_MARK])
    except NoReverseMatch:  # a pattern that refuses the marker: reverse() each time
        return None
    if url.count(_MARK) != 1:
        return None
    head, _, tail = url.partition(_MARK)
    try:
        reverse(name, urlconf=urlconf, args=["x-" + _MARK])
    except NoReverseMatch:
        letters = False
    else:
        letters = True
    return head, tail, letters


def reverse_one(name: str, arg: object) -> str:
    """reverse(name, args=[arg]), without resolving the pattern each time."""
    urlconf = get_urlconf()
    parts = _template(get_script_prefix(), urlconf, name)
    value = str(arg)
    if parts is not None and _WORD.fullmatch(value):
        head, tail, letters = parts
        if letters or value.isdigit():
            return head + value + tail
    return reverse(name, urlconf=urlconf, args=[arg])
