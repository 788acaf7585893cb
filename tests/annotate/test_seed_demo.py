import io
from collections import Counter

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.test import RequestFactory
from PIL import Image

from annotate.management.commands import seed_demo
from annotate.models import MULTIMODAL_REWARDBENCH_DOMAINS, Domain, ImageAsset, Item, Membership

CATEGORIES = {slug: category for slug, _, category, _ in MULTIMODAL_REWARDBENCH_DOMAINS}


def db_counts() -> dict[str, int]:
    return {
        "users": get_user_model().objects.count(),
        "memberships": Membership.objects.count(),
        "domains": Domain.objects.count(),
        "items": Item.objects.count(),
        "images": ImageAsset.objects.count(),
    }


@pytest.mark.django_db
def test_seed_demo_creates_the_demo_project_and_a_second_run_changes_nothing(monkeypatch):
    out = io.StringIO()
    call_command("seed_demo", stdout=out)

    # The MRB demo project; the generation demo projects are tested in
    # tests/demo/test_seed_generation.py.
    items = list(
        Item.objects.filter(project__slug="demo").select_related("domain", "image", "project")
    )
    assert {item.project.slug for item in items} == {"demo"}
    project = items[0].project
    assert project.name.startswith("Demo")
    assert {d.slug: d.export_category for d in project.domains.all()} == CATEGORIES
    assert len(items) == 120
    assert Counter(item.domain.slug for item in items) == {slug: 20 for slug in CATEGORIES}
    assert len({item.image.sha256 for item in items}) == 120

    # Everything came through the real Multimodal RewardBench import.
    assert all(item.meta["format"] == "mrb" for item in items)
    assert all(item.meta["prior_better"] in ("Output1", "Output2") for item in items)

    reasoning = [i.external_id for i in items if i.domain.slug == "reasoning"]
    math = [i for i in reasoning if i.lower().startswith("math")]
    assert 0 < len(math) < len(reasoning)  # the rest are coding items
    safety = [i.external_id for i in items if i.domain.slug == "safety"]
    bias = [i for i in safety if i.lower().startswith("pairs")]
    assert 0 < len(bias) < len(safety)  # the rest are toxicity items
    other = [i.external_id for i in items if i.domain.slug not in ("reasoning", "safety")]
    assert not [i for i in other if i.lower().startswith(("math", "pairs"))]

    responses = [r for item in items for r in (item.response_1, item.response_2)]
    assert any("```python" in r for r in responses)
    assert any("$$" in r for r in responses)
    assert any("$x" in r or "^\\circ$" in r for r in responses)  # inline LaTeX
    assert all(item.response_1 != item.response_2 for item in items)

    # Model names and gold answers are filled in after the import.
    assert all(item.model_1 and item.model_2 and item.model_1 != item.model_2 for item in items)
    gold = [item for item in items if item.gold_choice]
    assert 6 <= len(gold) <= 18
    assert all(f"Output{item.gold_choice}" == item.meta["prior_better"] for item in gold)

    for item in items:
        with default_storage.open(item.image.file, "rb") as fh, Image.open(fh) as img:
            assert img.format == "PNG"
            assert 400 <= img.width <= 640 and 150 <= img.height <= 480
            img.load()

    roles = {
        m.user.username: (m.role, m.pseudonym)
        for m in Membership.objects.filter(project=project).select_related("user")
    }
    assert roles == {
        "annotator1": ("annotator", "A1"),
        "annotator2": ("annotator", "A2"),
        "annotator3": ("annotator", "A3"),
        "curator": ("curator", "C1"),
        "admin": ("admin", "M1"),
    }
    admin = get_user_model().objects.get(username="admin")
    assert admin.is_staff and admin.is_superuser
    assert not get_user_model().objects.get(username="curator").is_staff
    # A request, as every log-in has one (django-axes counts failures per address).
    login = RequestFactory().post("/accounts/login/")
    assert authenticate(login, username="annotator2", password=seed_demo.DEMO_PASSWORD) is not None

    printed = out.getvalue()
    assert "http://127.0.0.1:8000/" in printed
    assert seed_demo.DEMO_PASSWORD in printed
    assert "120 items" in printed
    for username in roles:
        assert username in printed

    # The second run finds the items and generates nothing.
    before = db_counts()
    snapshot = list(Item.objects.order_by("pk").values_list("pk", "content_hash", "model_1"))
    assert len(snapshot) == 120 + 24 + 12 + 20 + 4 + 4  # demo, t2i, interleaved, bo4, video, audio

    def must_not_generate(*args, **kwargs):
        raise AssertionError("seed_demo generated items although the demo project has them")

    monkeypatch.setattr(seed_demo, "build_demo_items", must_not_generate)
    again = io.StringIO()
    call_command("seed_demo", stdout=again)
    assert db_counts() == before
    assert list(Item.objects.order_by("pk").values_list("pk", "content_hash", "model_1")) == (
        snapshot
    )
    assert again.getvalue().count("nothing new") == 6  # the six demo projects


@pytest.mark.django_db
def test_seed_demo_completes_a_partly_deleted_demo_without_touching_the_rest():
    call_command("seed_demo", stdout=io.StringIO())
    kept = Item.objects.get(external_id="vqa_demo_1")
    kept.model_1 = "edited-by-hand"
    kept.gold_choice = ""
    kept.save()
    Item.objects.filter(external_id__in=["vqa_demo_2", "knowledge_demo_3"]).delete()

    call_command("seed_demo", stdout=io.StringIO())

    assert Item.objects.filter(project__slug="demo").count() == 120
    kept.refresh_from_db()
    assert kept.model_1 == "edited-by-hand"  # never overwritten
    assert get_user_model().objects.count() == 5


def test_seed_demo_prints_the_address_it_is_given(db):
    out = io.StringIO()
    call_command("seed_demo", "--url", "http://192.168.1.20:8203/", stdout=out)
    assert "Open http://192.168.1.20:8203/ and sign in" in out.getvalue()
    assert "127.0.0.1:8000" not in out.getvalue()
