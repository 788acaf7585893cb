"""``{% load setup %}`` → ``{% if user|can_create_projects %}``."""

from django import template

from annotate.setup.service import can_create_projects as _can_create_projects

register = template.Library()


@register.filter
def can_create_projects(user) -> bool:
    return _can_create_projects(user)
