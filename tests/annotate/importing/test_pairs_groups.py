"""Issue 34: the generic pairs JSONL reads optional `group` and `criterion`
into Item.group_key / Item.criterion (kept in meta.source as well), and a
wrong one is refused naming its record and field."""

import json

import pytest

from annotate.importing.records import ImportFailed
from annotate.importing.service import import_items_from_paths
from annotate.models import Item, shuffle_key
from tests.factories import make_project, pairs_record, png_bytes

pytestmark = pytest.mark.django_db


def write(tmp_path, records):
    (tmp_path / "images").mkdir(exist_ok=True)
    (tmp_path / "images" / "red.png").write_bytes(png_bytes())
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_group_and_criterion_land_on_the_items(tmp_path):
    project = make_project()
    records = [
        pairs_record("p1-a", group="p1", criterion="Which is more helpful?"),
        pairs_record("p1-b", group="p1", criterion="Which is safer?"),
        pairs_record("solo"),
    ]
    import_items_from_paths(project=project, dataset=write(tmp_path, records), images=tmp_path)
    items = {i.external_id: i for i in Item.objects.filter(project=project)}
    assert items["p1-a"].group_key == items["p1-b"].group_key == "p1"
    assert items["p1-b"].criterion == "Which is safer?"
    assert items["solo"].group_key == "" and items["solo"].criterion == ""
    assert items["p1-a"].meta["source"] == {"group": "p1", "criterion": "Which is more helpful?"}
    # The group's items sit together in the claim order.
    assert (
        items["p1-a"].shuffle_key
        == items["p1-b"].shuffle_key
        == shuffle_key(project.seed, "p1-a", "p1")
    )


def test_a_group_that_is_not_a_string_or_too_long_is_refused(tmp_path):
    records = [pairs_record("a", group=7), pairs_record("b", group="g" * 201)]
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(
            project=make_project(), dataset=write(tmp_path, records), images=tmp_path
        )
    problems = [(p.line, p.field, p.message) for p in failure.value.problems]
    assert (1, "group", "must be a string, not int") in problems
    assert (2, "group", "is longer than 200 characters") in problems
    assert not Item.objects.exists()


def test_reimport_with_a_new_criterion_updates_the_item(tmp_path):
    project = make_project()
    path = write(tmp_path, [pairs_record("a", group="g", criterion="Old?")])
    import_items_from_paths(project=project, dataset=path, images=tmp_path)
    path = write(tmp_path, [pairs_record("a", group="g", criterion="New?")])
    report = import_items_from_paths(project=project, dataset=path, images=tmp_path, update=True)
    assert Item.objects.get(external_id="a").criterion == "New?"
    assert report is not None
