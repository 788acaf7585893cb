"""The Jinja2 environment for the few templates that render on every
judgement (templates/jinja2/): the compare page's #work fragment, which
Django's template engine took about 0.85 ms to render and Jinja2, compiling
it to Python, renders in a fraction of that (bench/README.md).

Autoescaping is on; Django's SafeString (already-sanitised Markdown, form
errors) passes through as safe, as in Django templates. Django's Jinja2
backend adds `csrf_input`, `csrf_token` and `request` to every context."""

from django.templatetags.static import static
from django.urls import reverse
from jinja2 import Environment, StrictUndefined

from annotate.rendering import render_markdown


def url(name: str, *args) -> str:
    return reverse(name, args=args)


def markdown(value: object) -> str:
    """As the `markdown` filter of Django templates (annotate.templatetags)."""
    return render_markdown("" if value is None else str(value))


def environment(**options) -> Environment:
    # A missing variable is an error, not an empty string: the page must
    # never silently drop the CSRF field or a form value.
    env = Environment(**{**options, "undefined": StrictUndefined})
    env.globals.update(url=url, static=static)
    env.filters["markdown"] = markdown
    return env
