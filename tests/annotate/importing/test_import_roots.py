"""Server-side import roots (annotate.importing.roots): a dataset and its
images referenced by a path under an admin-configured root, from the service,
the upload page and the API; paths confined to the roots (no `..`, no
symlink out)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.importing.records import ImportFailed
from annotate.importing.roots import import_server_items, resolve_server_path
from annotate.models import Item
from tests.factories import make_member, make_project, png_bytes

pytestmark = pytest.mark.django_db


def write_dataset(folder: Path, image: str = "img/red.png") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / image
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(png_bytes())
    record = {
        "id": "vqa_1",
        "prompt": "What colour?",
        "chosen": "Red.",
        "rejected": "Blue.",
        "image": image,
        "category": "vqa",
    }
    path = folder / "data.jsonl"
    path.write_text(json.dumps(record) + "\n")
    return path


def site_roots() -> list[str]:
    from django.conf import settings

    return list(settings.IMPORT_ROOTS)


@pytest.fixture
def root(tmp_path, settings):
    root = tmp_path / "root"
    root.mkdir()
    settings.IMPORT_ROOTS = [str(root)]
    return root


def test_a_dataset_under_a_root_imports_with_its_images_beside_it(root):
    write_dataset(root / "sets" / "vl")
    project = make_project(import_roots=[str(root)])
    result = import_server_items(project=project, dataset=str(root / "sets/vl/data.jsonl"))
    assert result.created == 1


def test_a_relative_path_resolves_under_the_root_and_images_folder_can_be_separate(root):
    write_dataset(root / "sets")
    (root / "sets" / "img").rename(root / "pictures")
    (root / "pictures").mkdir(exist_ok=True)
    (root / "pictures" / "img").mkdir()
    (root / "pictures" / "img" / "red.png").write_bytes(png_bytes())
    project = make_project(import_roots=[str(root)])
    result = import_server_items(project=project, dataset="sets/data.jsonl", images="pictures")
    assert result.created == 1


def test_dot_dot_is_refused(root):
    write_dataset(root.parent / "outside")
    with pytest.raises(ImportFailed, match=r"may not contain '\.\.'"):
        resolve_server_path(str(root / ".." / "outside" / "data.jsonl"), site_roots())
    with pytest.raises(ImportFailed, match=r"may not contain '\.\.'"):
        resolve_server_path("../outside/data.jsonl", site_roots())


def test_a_path_outside_every_root_is_refused(root):
    outside = write_dataset(root.parent / "outside")
    with pytest.raises(ImportFailed, match="is not under an import root"):
        resolve_server_path(str(outside), site_roots())


def test_a_symlink_out_of_the_root_is_refused(root):
    outside = write_dataset(root.parent / "outside")
    (root / "link.jsonl").symlink_to(outside)
    (root / "linked-folder").symlink_to(outside.parent, target_is_directory=True)
    for path in (str(root / "link.jsonl"), "linked-folder/data.jsonl"):
        with pytest.raises(ImportFailed, match="is not under an import root"):
            resolve_server_path(path, site_roots())
    assert Item.objects.count() == 0


def test_an_image_symlinked_out_of_the_root_is_refused(root):
    dataset = write_dataset(root / "sets")
    secret = root.parent / "secret.png"
    secret.write_bytes(png_bytes(color=(1, 1, 1)))
    (root / "sets" / "img" / "red.png").unlink()
    os.symlink(secret, root / "sets" / "img" / "red.png")
    with pytest.raises(ImportFailed, match="leaves the image folder"):
        import_server_items(project=make_project(import_roots=[str(root)]), dataset=str(dataset))


def test_without_roots_server_paths_are_off(settings, tmp_path):
    settings.IMPORT_ROOTS = []
    with pytest.raises(ImportFailed, match="server paths are off"):
        resolve_server_path(str(write_dataset(tmp_path)), site_roots())


def test_a_missing_path_says_so(root):
    with pytest.raises(ImportFailed, match="not found under the import roots"):
        resolve_server_path("nothing/here.jsonl", site_roots())


# --- The upload page and the API -----------------------------------------------------


def test_the_upload_page_shows_the_server_path_field_only_with_roots(client, settings, tmp_path):
    project = make_project(import_roots=[str(tmp_path)])
    client.force_login(make_member(project, role="admin"))
    url = reverse("import", args=[project.slug])
    settings.IMPORT_ROOTS = []
    assert "server_path" not in client.get(url).content.decode()
    settings.IMPORT_ROOTS = [str(tmp_path)]
    assert 'name="server_path"' in client.get(url).content.decode()


def test_the_upload_page_imports_a_server_path(client, root):
    write_dataset(root / "sets")
    project = make_project(import_roots=[str(root)])
    client.force_login(make_member(project, role="admin"))
    r = client.post(reverse("import", args=[project.slug]), {"server_path": "sets/data.jsonl"})
    assert r.status_code == 302, r.content.decode()
    assert project.items.count() == 1


def test_the_upload_page_shows_a_refused_path_as_a_problem(client, root):
    project = make_project(import_roots=[str(root)])
    client.force_login(make_member(project, role="admin"))
    r = client.post(reverse("import", args=[project.slug]), {"server_path": "../etc/passwd"})
    assert r.status_code == 400
    assert "may not contain" in r.content.decode()


def api_client(project) -> APIClient:
    api = APIClient()
    token = Token.objects.create(user=make_member(project, role="admin"))
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return api


def test_the_api_imports_a_server_path(root):
    write_dataset(root / "sets")
    project = make_project(slug="api-roots", import_roots=[str(root)])
    r = api_client(project).post(
        "/api/v1/projects/api-roots/imports/",
        {"server_path": "sets/data.jsonl"},
        format="multipart",
    )
    assert r.status_code == 200, r.content
    assert r.json()["created"] == 1


def test_the_api_refuses_server_paths_without_roots(settings, tmp_path):
    settings.IMPORT_ROOTS = []
    project = make_project(slug="api-roots")
    r = api_client(project).post(
        "/api/v1/projects/api-roots/imports/",
        {"server_path": str(write_dataset(tmp_path))},
        format="multipart",
    )
    assert r.status_code == 400
    assert "Server paths are off for this project" in r.content.decode()


# --- Roots per project (issue 29) ----------------------------------------------------


@pytest.fixture
def two_teams(tmp_path, settings):
    """Two teams' folders under IMPORT_ROOTS; each project may read its own."""
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    write_dataset(ours)
    write_dataset(theirs)
    settings.IMPORT_ROOTS = [str(ours), str(theirs)]
    project = make_project(slug="ours", import_roots=[str(ours)])
    return project, ours, theirs


def test_a_project_reads_only_the_roots_chosen_for_it(two_teams):
    project, ours, theirs = two_teams
    with pytest.raises(ImportFailed, match="is not under an import root"):
        import_server_items(project=project, dataset=str(theirs / "data.jsonl"))
    assert project.items.count() == 0
    assert import_server_items(project=project, dataset=str(ours / "data.jsonl")).created == 1


def test_a_new_project_reads_no_root_until_a_site_admin_chooses(two_teams):
    _, ours, _ = two_teams
    fresh = make_project()
    assert fresh.import_roots == []
    with pytest.raises(ImportFailed, match="server paths are off for this project"):
        import_server_items(project=fresh, dataset=str(ours / "data.jsonl"))


def test_a_root_the_site_no_longer_lists_is_not_read(two_teams, settings):
    project, ours, theirs = two_teams
    settings.IMPORT_ROOTS = [str(theirs)]
    with pytest.raises(ImportFailed, match="server paths are off for this project"):
        import_server_items(project=project, dataset=str(ours / "data.jsonl"))


def test_the_upload_page_refuses_another_teams_folder(client, two_teams):
    project, _, theirs = two_teams
    client.force_login(make_member(project, role="admin"))
    url = reverse("import", args=[project.slug])
    r = client.post(url, {"server_path": str(theirs / "data.jsonl")})
    assert r.status_code == 400
    assert "is not under an import root" in r.content.decode()
    assert project.items.count() == 0


def test_the_upload_page_hides_server_paths_from_a_project_without_roots(client, two_teams):
    project = make_project()
    client.force_login(make_member(project, role="admin"))
    url = reverse("import", args=[project.slug])
    page = client.get(url).content.decode()
    assert "server_path" not in page
    assert "Importing by server path is off for this project: a site admin chooses" in page
    _, ours, _ = two_teams
    # A posted path is ignored (the field is not there): the upload is missing.
    r = client.post(url, {"server_path": str(ours / "data.jsonl")})
    assert r.status_code == 400 and project.items.count() == 0


def test_the_api_refuses_another_teams_folder(two_teams):
    project, _, theirs = two_teams
    r = api_client(project).post(
        f"/api/v1/projects/{project.slug}/imports/",
        {"server_path": str(theirs / "data.jsonl")},
        format="multipart",
    )
    assert r.status_code == 400, r.content
    assert "is not under an import root" in r.content.decode()
    assert project.items.count() == 0


def test_the_api_refuses_server_paths_to_a_project_without_roots(two_teams):
    _, ours, _ = two_teams
    project = make_project(slug="rootless")
    r = api_client(project).post(
        "/api/v1/projects/rootless/imports/",
        {"server_path": str(ours / "data.jsonl")},
        format="multipart",
    )
    assert r.status_code == 400
    assert "Server paths are off for this project" in r.content.decode()


def test_the_command_line_reads_every_site_root(two_teams):
    from django.core.management import call_command

    _, _, theirs = two_teams
    fresh = make_project(slug="cli-local")
    call_command(
        "import_items", "cli-local", str(theirs / "data.jsonl"), images=str(theirs), verbosity=0
    )
    assert fresh.items.count() == 1
