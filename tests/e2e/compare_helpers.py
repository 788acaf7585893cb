"""Shared set-up for the compare page's browser journeys (issue 19)."""

import json

from annotate.importing.service import import_items_from_paths
from annotate.models import Membership
from tests.factories import make_project, make_user, png_bytes


def import_items(tmp_path, project, categories, *, long_text: bool = False) -> None:
    """One item per category (Multimodal RewardBench Category strings), with
    real images, through the importer."""
    (tmp_path / "img").mkdir(exist_ok=True)
    records = []
    line = "a long line of response text " * 12
    filler = "\n\n".join(f"Paragraph {n}: {line}" for n in range(12))
    for i, category in enumerate(categories):
        name = f"img/{i}.png"
        (tmp_path / name).write_bytes(png_bytes(size=(320, 200), color=(30 * i % 256, 80, 160)))
        records.append(
            {
                "ID": f"item_{i}",
                "Text": f"**Question {i}:** what colour dominates the image?",
                "Image": name,
                "Output1": f"First answer {i}." + (f"\n\n{filler}" if long_text else ""),
                "Output2": f"Second answer {i}." + (f"\n\n{filler}" if long_text else ""),
                "Better": "Output1",
                "Category": category,
            }
        )
    path = tmp_path / "data.json"
    path.write_text(json.dumps(records))
    import_items_from_paths(project=project, dataset=path, images=tmp_path)


def annotator_project(
    tmp_path, categories, *, votes_per_item=3, username="ann", long_text=False, **kwargs
):
    project = make_project(slug="p19", votes_per_item=votes_per_item, **kwargs)
    import_items(tmp_path, project, categories, long_text=long_text)
    user = make_user(username)
    Membership.objects.create(project=project, user=user, role="annotator")
    return project, user


def log_in(
    page,
    base_url: str,
    username: str,
    next_url: str = "/",
    *,
    password: str = "pw",
    keyboard: bool = False,
) -> None:
    """Log in through the log-in page (by keyboard alone with `keyboard`) and
    wait until the browser has left it for `next_url`."""
    page.goto(f"{base_url}/accounts/login/?next={next_url}")
    if keyboard:
        page.wait_for_selector("input[name=username]:focus")
        page.keyboard.type(username)
        page.keyboard.press("Tab")
        page.keyboard.type(password)
        page.keyboard.press("Enter")
    else:
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", password)
        page.press("input[name=password]", "Enter")
    # The log-in page's own URL ends with ?next=<next_url>: wait until it is left.
    page.wait_for_url(lambda url: "/accounts/login/" not in url and url.endswith(next_url))


def start(page, base_url: str, slug: str = "p19") -> None:
    """Log-in done: press Start annotating and wait for the first item."""
    page.goto(f"{base_url}/p/{slug}/")
    page.click("text=Start annotating")
    page.wait_for_url("**/a/*/")
    page.wait_for_selector("#work")
    # work.js binds on DOMContentLoaded; htmx processes the forms then too.
    page.wait_for_function("() => window.htmx && document.readyState === 'complete'")
