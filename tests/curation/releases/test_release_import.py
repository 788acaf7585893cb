"""A release zip imports back (annotate.importing.formats.release): release →
import → release gives byte-identical records; re-importing is a no-op, into
the new project or the one the release came from; the released labels are
the items' gold and their verdicts, audited with the release's SHA-256."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from annotate.importing.records import ImportFailed
from annotate.importing.service import import_items_from_paths
from annotate.models import Item, Project
from curation.models import AuditEvent, Verdict
from tests.curation.releases.test_releases import INCLUDED, built, make_release_project, media

pytestmark = pytest.mark.django_db

SEED = 11  # built()'s default release seed


def new_project(slug="copy") -> Project:
    project = Project.objects.create(slug=slug, name=f"Copy {slug}")
    project.create_default_domains()
    return project


def release_files(folder: Path) -> dict[str, bytes]:
    """The record files of a release (everything derived from the records)."""
    names = ["all_data.json", *(p.name for p in folder.glob("*.json") if p.name != "manifest.json")]
    out = {name: (folder / name).read_bytes() for name in names}
    for sub in ("dpo", "parquet", "images"):
        for path in sorted((folder / sub).rglob("*")):
            if path.is_file():
                out[path.relative_to(folder).as_posix()] = path.read_bytes()
    return out


@pytest.fixture
def original(tmp_path):
    return make_release_project(tmp_path)


def test_release_import_release_gives_byte_identical_records(original):
    first = built(original, seed=SEED)
    copy = new_project()
    result = import_items_from_paths(project=copy, dataset=media(first.archive))
    assert result.created == len(INCLUDED)
    assert "seed 11" in result.summary()
    again = built(copy, seed=SEED)
    before, after = release_files(media(first.folder)), release_files(media(again.folder))
    assert sorted(before) == sorted(after)
    for name in before:
        assert before[name] == after[name], name
    assert (media(first.folder) / "all_data.json").read_bytes() == (
        media(again.folder) / "all_data.json"
    ).read_bytes()


def test_released_labels_become_gold_and_audited_verdicts(original):
    release = built(original, seed=SEED)
    copy = new_project()
    import_items_from_paths(project=copy, dataset=media(release.archive))
    decided = {
        v.item.external_id: v for v in Verdict.objects.filter(project=copy).select_related("item")
    }
    assert set(decided) == INCLUDED
    for verdict in decided.values():
        assert (verdict.status, verdict.provenance) == ("resolved", "gold")
        assert verdict.final_choice == verdict.item.gold_choice
        assert verdict.item.votes_needed == 0  # nothing left to claim
    event = AuditEvent.objects.filter(project=copy, action="release_imported").first()
    assert event.after["release"]["sha256"] == release.sha256
    assert event.after["release"]["version"] == "v1.0"
    assert AuditEvent.objects.filter(project=copy, action="release_imported").count() == len(
        INCLUDED
    )


def test_reimporting_a_release_changes_nothing(original):
    release = built(original, seed=SEED)
    copy = new_project()
    import_items_from_paths(project=copy, dataset=media(release.archive))
    events = AuditEvent.objects.count()
    again = import_items_from_paths(project=copy, dataset=media(release.archive))
    assert (again.created, again.updated, again.unchanged) == (0, 0, len(INCLUDED))
    assert AuditEvent.objects.count() == events


def test_importing_a_release_into_its_own_project_changes_nothing(original):
    release = built(original, seed=SEED)
    items = Item.objects.filter(project=original).count()
    verdicts = list(Verdict.objects.filter(project=original).values_list("status", "final_choice"))
    result = import_items_from_paths(project=original, dataset=media(release.archive))
    assert (result.created, result.unchanged) == (0, len(INCLUDED))
    assert Item.objects.filter(project=original).count() == items
    assert (
        list(Verdict.objects.filter(project=original).values_list("status", "final_choice"))
        == verdicts
    )


def test_a_release_into_a_project_with_some_of_its_items_adds_the_rest(original):
    vqa_only = built(original, "v0.1", seed=SEED, domains=["vqa"])
    release = built(original, seed=SEED)
    copy = new_project()
    first = import_items_from_paths(project=copy, dataset=media(vqa_only.archive))
    result = import_items_from_paths(project=copy, dataset=media(release.archive))
    assert (result.created, result.unchanged) == (len(INCLUDED) - first.created, first.created)


def test_same_id_with_other_content_is_refused(original):
    release = built(original, seed=SEED)
    copy = new_project()
    import_items_from_paths(project=copy, dataset=media(release.archive))
    # Another item under the same ID: other text (its parts), so another fingerprint.
    item = Item.objects.get(project=copy, external_id="vqa_1")
    item.content_parts.filter(slot="prompt", kind="text").update(text="changed")
    Item.objects.filter(pk=item.pk).update(prompt="changed", content_hash="other")
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=copy, dataset=media(release.archive))
    assert "1 record has an ID already in the project with different content: Text differs" in (
        str(failure.value)
    )


def test_an_altered_release_is_refused(original, tmp_path):
    release = built(original, seed=SEED)
    altered = tmp_path / "altered.zip"
    with zipfile.ZipFile(media(release.archive)) as src, zipfile.ZipFile(altered, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("/all_data.json"):
                data = data.replace(b"first response", b"first  response")
            dst.writestr(info, data)
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=new_project(), dataset=altered)
    assert "does not match its SHA-256 in manifest.json" in str(failure.value)


def test_a_release_folder_imports_like_its_zip(original):
    release = built(original, seed=SEED)
    copy = new_project()
    result = import_items_from_paths(project=copy, dataset=media(release.folder))
    assert result.created == len(INCLUDED)


def test_plain_dataset_options_are_refused_for_a_release(original):
    release = built(original, seed=SEED)
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(
            project=new_project(), dataset=media(release.archive), gold_from_label=True
        )
    assert "options do not apply to it: gold from label" in str(failure.value)


def test_the_command_imports_a_release_zip(original):
    from django.core.management import call_command

    release = built(original, seed=SEED)
    copy = new_project("cli-copy")
    call_command("import_items", "cli-copy", str(media(release.archive)), verbosity=0)
    assert copy.items.count() == len(INCLUDED)


def test_the_upload_page_imports_a_release_zip(original, client):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from tests.factories import make_member

    release = built(original, seed=SEED)
    copy = new_project("page-copy")
    client.force_login(make_member(copy, role="admin"))
    upload = SimpleUploadedFile("release.zip", media(release.archive).read_bytes())
    r = client.post(reverse("import", args=[copy.slug]), {"dataset": upload})
    assert r.status_code == 302
    assert copy.items.count() == len(INCLUDED)
