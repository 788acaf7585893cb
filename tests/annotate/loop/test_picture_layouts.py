"""Issue 24, item 2: how the compare page lays out an item by its shape.
Responses of pictures alone are side by side ("pictures", with flicker); an
edit's input image goes beside both results ("edit"), out of the prompt;
text and pictures stay in order ("parts"); the `?` panel and data-actions
list exactly the picture keys that act for each; nothing names a model."""

import re

import pytest
from django.urls import reverse

from annotate.importing.formats.mmrb2 import import_mmrb2_from_paths
from annotate.loop.page import _keymap, _layout
from annotate.loop.service import claim_next_item
from annotate.models import Item
from tests.annotate.importing.test_mmrb2 import published_fixture
from tests.factories import make_member, make_project

pytestmark = pytest.mark.django_db

MODELS = ("imagen4", "gpt-image-1", "flux", "GPTGeminiAgent", "chameleon", "model-a", "model-b")


def page_of(client, tmp_path, task: str, only: str | None = None) -> tuple[str, object]:
    published_fixture(tmp_path)
    project = make_project(votes_per_item=1, preference_scale="graded6")
    import_mmrb2_from_paths(project=project, dataset=tmp_path / f"{task}.json")
    if only is not None:
        Item.objects.filter(project=project).exclude(external_id=only).delete()
    annotator = make_member(project)
    assignment = claim_next_item(project=project, annotator=annotator)
    client.force_login(annotator)
    return client.get(reverse("work_item", args=[assignment.pk])).content.decode(), assignment


def actions(page: str) -> set[str]:
    return set(re.search(r'data-actions="([^"]*)"', page).group(1).split())


def test_an_edit_puts_its_input_image_beside_both_results(client, tmp_path):
    page, _ = page_of(client, tmp_path, "edit")
    assert 'data-layout="edit"' in page
    assert '<section class="responses pictures edit">' in page
    prompt = page.split('<div class="prompt">')[1].split("</section>")[0]
    assert "Make it snow" in prompt and "<img" not in prompt
    card = page.split('<section class="input-card"')[1].split("</section>")[0]
    assert card.count('class="part-img"') == 1 and 'alt="Prompt, image"' in card
    # The input card comes first in the row, then the flicker frame, then A and B.
    row = page.split('<section class="responses pictures edit">')[1]
    assert row.index("input-card") < row.index('id="flicker"') < row.index('data-side="left"')
    assert {"zoom", "pan", "flicker"} <= actions(page) and "fullsize" not in actions(page)
    for secret in (*MODELS, "emu_edit", "emu-edit", "input_images/"):
        assert secret not in page


def test_text_to_image_pairs_are_pictures_with_flicker(client, tmp_path):
    page, _ = page_of(client, tmp_path, "t2i")
    assert 'data-layout="pictures"' in page
    assert '<section class="responses pictures">' in page
    assert 'data-action="flicker" aria-pressed="false"' in page
    assert "input-card" not in page
    assert {"zoom", "pan", "flicker"} <= actions(page)
    for secret in MODELS:
        assert secret not in page


def test_interleaved_pairs_zoom_and_pan_but_do_not_flicker(client, tmp_path):
    page, _ = page_of(client, tmp_path, "interleaved")
    assert 'data-layout="parts"' in page
    assert '<section class="responses">' in page
    assert 'id="flicker"' not in page and 'data-action="flicker"' not in page
    assert {"zoom", "pan"} <= actions(page)
    assert not {"flicker", "fullsize"} & actions(page)
    # The `?` panel lists the same keys.
    assert "Shift+←" in page and "Flicker" not in page


def test_an_mrb_item_keeps_its_viewer_keys(client, tmp_path):
    page, _ = page_of(client, tmp_path, "reasoning", only="mindcube_gpt-4o_claude_1")
    assert 'data-layout="image_prompt"' in page and 'id="viewer-img"' in page
    assert {"zoom", "fullsize"} <= actions(page)
    assert not {"pan", "flicker"} & actions(page)
    assert "picture-tools" not in page


def test_a_prompt_picture_before_text_responses_zooms_in_order(client, tmp_path):
    page, _ = page_of(client, tmp_path, "reasoning", only="vstar_claude_claude_2")
    assert 'data-layout="parts"' in page and "picture-tools" in page
    assert {"zoom", "pan"} <= actions(page) and "flicker" not in actions(page)


def test_layout_follows_the_shape_of_the_shown_parts():
    img, text = {"image": object(), "alt": "x"}, {"html": "<p>x</p>"}
    assert _layout({"prompt": [text], "left": [img], "right": [img, img]}) == "pictures"
    assert _layout({"prompt": [img, text], "left": [img], "right": [img]}) == "edit"
    assert _layout({"prompt": [text], "left": [text, img], "right": [img]}) == "parts"
    assert _layout({"prompt": [img], "left": [text], "right": [text]}) == "parts"
    assert _layout({"prompt": [text], "left": [text], "right": [text]}) == "text"
    # An empty response is not a picture response.
    assert _layout({"prompt": [text], "left": [], "right": [img]}) == "parts"


def test_each_picture_key_is_listed_only_where_it_acts():
    def keys(layout):
        return {
            a
            for a, _, _ in _keymap(
                allow_tie=True, domain_words=None, judged=False, can_revise=False, layout=layout
            )
        }

    image_prompt = keys("image_prompt")
    assert {"zoom", "fullsize"} <= image_prompt and not {"pan", "flicker"} & image_prompt
    assert not {"zoom", "pan", "flicker", "fullsize"} & keys("text")
    assert {"zoom", "pan"} <= keys("parts") and "flicker" not in keys("parts")
    for layout in ("pictures", "edit"):
        assert {"zoom", "pan", "flicker"} <= keys(layout) and "fullsize" not in keys(layout)


def test_every_key_in_the_key_panel_has_a_cap_including_the_comma_grade_key():
    """Issue 31: `,` (grade C of response B) was split away, leaving two empty
    key caps in the `?` panel."""
    for layout in ("image_prompt", "text", "parts", "pictures", "edit"):
        keymap = _keymap(
            allow_tie=True,
            domain_words=("Is {response} correct?", "Yes", "No"),
            judged=False,
            can_revise=False,
            grade_question="Grade of {response}",
            layout=layout,
        )
        caps = [k for _, keys, _ in keymap for k in keys]
        assert all(caps), (layout, keymap)
        by_action = {action: keys for action, keys, _ in keymap}
        assert by_action["grade-right-C"] == (",",)
        assert by_action["confidence"] == ("[", "]")
        assert by_action["left"] == ("1", "←")
