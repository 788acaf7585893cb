"""One template language: Django's (shared/DESIGN.md, "Layout")."""

from pathlib import Path

from django.conf import settings

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


def test_every_template_is_a_django_template():
    assert [engine["BACKEND"] for engine in settings.TEMPLATES] == [
        "django.template.backends.django.DjangoTemplates"
    ]
    assert not (TEMPLATES / "jinja2").exists()
