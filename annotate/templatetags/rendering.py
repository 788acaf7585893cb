"""``{% load rendering %}`` → ``{{ project.guidelines|markdown }}``."""

from django import template
from django.utils.safestring import SafeString

from annotate.rendering import render_markdown

register = template.Library()


@register.filter(name="markdown")
def markdown(value: object) -> SafeString:
    """Render untrusted Markdown as sanitised HTML (see annotate.rendering)."""
    return render_markdown("" if value is None else str(value))
