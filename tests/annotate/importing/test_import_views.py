"""The admin upload page /p/<slug>/import/: who may use it, what a good and a
bad upload look like. The importer's rules themselves are in test_import.py."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from django.contrib.messages import get_messages
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotate.models import ImageAsset, Item
from tests.factories import make_member, make_project, make_user, png_bytes

pytestmark = pytest.mark.django_db

CORPUS = Path(__file__).resolve().parents[3] / "tests" / "data" / "import"


def zip_upload(name: str, members: dict[str, bytes]) -> SimpleUploadedFile:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for member, data in members.items():
            archive.writestr(member, data)
    return SimpleUploadedFile(name, out.getvalue(), content_type="application/zip")


def corpus_upload(name: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, (CORPUS / name).read_bytes())


def corpus_images_zip() -> SimpleUploadedFile:
    return zip_upload(
        "images.zip",
        {f"images/{p.name}": p.read_bytes() for p in sorted((CORPUS / "images").iterdir())},
    )


def bundle_zip(dataset: str = "valid.json", **extra: bytes) -> SimpleUploadedFile:
    members = {f"bundle/{dataset}": (CORPUS / dataset).read_bytes()}
    for image in ("red.png", "blue.png"):
        members[f"bundle/images/{image}"] = (CORPUS / "images" / image).read_bytes()
    members.update(extra)
    return zip_upload("bundle.zip", members)


@pytest.fixture
def project():
    return make_project(slug="bench")


@pytest.fixture
def admin_client(client, project):
    client.force_login(make_member(project, role="admin"))
    return client


def import_url(project) -> str:
    return reverse("import", args=[project.slug])


def assert_nothing_written() -> None:
    assert Item.objects.count() == 0
    assert ImageAsset.objects.count() == 0
    assert not default_storage.exists("images")


def test_admin_sees_the_upload_form(admin_client, project):
    response = admin_client.get(import_url(project))
    assert response.status_code == 200
    assert b'enctype="multipart/form-data"' in response.content
    assert b'name="dataset"' in response.content


def test_admin_uploads_a_dataset_zip_with_images_and_sees_a_success_message(admin_client, project):
    response = admin_client.post(import_url(project), {"dataset": bundle_zip()})

    assert response.status_code == 302
    assert response["Location"] == reverse("project", args=[project.slug])
    assert [str(m) for m in get_messages(response.wsgi_request)] == [
        "bundle.zip: 2 created, 0 updated, 0 unchanged; 2 new images stored"
    ]
    assert set(project.items.values_list("external_id", flat=True)) == {"mathvista_1", "vqa_2"}
    page = admin_client.get(response["Location"])
    assert b"2 created" in page.content


def test_admin_uploads_a_jsonl_file_with_a_separate_images_zip(admin_client, project):
    response = admin_client.post(
        import_url(project),
        {
            "dataset": corpus_upload("no_category.jsonl"),
            "images": corpus_images_zip(),
            "domain": "safety",
        },
    )
    assert response.status_code == 302
    assert project.items.get().domain.slug == "safety"


def test_field_map_typed_into_the_form_is_used(admin_client, project):
    response = admin_client.post(
        import_url(project),
        {
            "dataset": corpus_upload("query_field.jsonl"),
            "images": corpus_images_zip(),
            "field_map": "id=qid\r\nprompt = query\r\n\r\ncategory=subset",
        },
    )
    assert response.status_code == 302
    assert project.items.get(external_id="mm_1").prompt == "Is the square red?"


def test_reuploading_the_same_file_reports_everything_unchanged(admin_client, project):
    admin_client.post(import_url(project), {"dataset": bundle_zip()})
    response = admin_client.post(import_url(project), {"dataset": bundle_zip()})
    assert [str(m) for m in get_messages(response.wsgi_request)][-1] == (
        "bundle.zip: 0 created, 0 updated, 2 unchanged; 0 new images stored"
    )
    assert Item.objects.count() == 2


def test_invalid_file_lists_every_problem_with_400_and_writes_nothing(admin_client, project):
    response = admin_client.post(
        import_url(project),
        {"dataset": corpus_upload("wrong_types.json"), "images": corpus_images_zip()},
    )

    assert response.status_code == 400
    assert response.context["problems"] == [
        "wrong_types.json:2: record 0: field 'ID': must be a string, not int",
        "wrong_types.json:3: record 1: field 'Text': must be a string, not list",
        "wrong_types.json:4: record 2: field 'Output1': must be a string, not dict",
        "wrong_types.json:5: record 3: field 'Better': must be a string, not bool",
    ]
    content = response.content.decode()
    assert "Import failed — nothing was written" in content
    assert "wrong_types.json:3: record 1: field &#x27;Text&#x27;: must be a string" in content
    assert_nothing_written()


def test_problems_beyond_the_cap_are_announced(admin_client, project, settings):
    settings.IMPORT_MAX_ERRORS = 2
    response = admin_client.post(
        import_url(project),
        {"dataset": corpus_upload("missing_fields.json"), "images": corpus_images_zip()},
    )
    assert response.status_code == 400
    assert len(response.context["problems"]) == 2
    assert response.context["truncated"]
    assert b"Stopped after 2 errors." in response.content


def test_one_bad_image_in_the_bundle_rejects_the_whole_upload(admin_client, project):
    upload = bundle_zip(**{"bundle/images/blue.png": b"<html>not an image</html>"})
    response = admin_client.post(import_url(project), {"dataset": upload})
    assert response.status_code == 400
    assert response.context["problems"] == [
        "bundle.zip:bundle/valid.json:3: record 1: field 'Image': "
        "image 'images/blue.png': not an image Pillow can read"
    ]
    assert_nothing_written()


@pytest.mark.parametrize("member", ["../evil.png", "/abs.png"])
def test_zip_with_a_traversing_member_is_refused_with_400(admin_client, project, member):
    response = admin_client.post(
        import_url(project), {"dataset": bundle_zip(**{member: png_bytes()})}
    )
    assert response.status_code == 400
    assert response.context["problems"] == [
        f"bundle.zip: archive member '{member}' has an absolute path or '..'; "
        "the archive is refused"
    ]
    assert_nothing_written()


def test_changed_item_is_refused_and_replaced_when_chosen_without_a_new_upload(
    admin_client, project
):
    admin_client.post(import_url(project), {"dataset": bundle_zip()})
    changed = (CORPUS / "valid.json").read_text().replace("Three apples.", "Five apples.")
    upload = zip_upload(
        "bundle.zip",
        {
            "data.json": changed.encode(),
            "images/red.png": (CORPUS / "images/red.png").read_bytes(),
            "images/blue.png": (CORPUS / "images/blue.png").read_bytes(),
        },
    )

    refused = admin_client.post(import_url(project), {"dataset": upload})
    assert refused.status_code == 400
    assert (
        "1 record has an ID already in the project with different content: "
        "Output1 differs on 1 record (first: 0)"
    ) in refused.context["problems"][0]
    # The file stays on the server: choosing the option is enough (issue 31).
    token = refused.context["form"].data["staged"]
    accepted = admin_client.post(import_url(project), {"staged": token, "conflicts": "replace"})
    assert accepted.status_code == 302
    assert project.items.get(external_id="mathvista_1").response_1 == "Five apples."


def test_wrong_file_type_is_a_form_error(admin_client, project):
    response = admin_client.post(
        import_url(project), {"dataset": SimpleUploadedFile("data.csv", b"a,b\n")}
    )
    assert response.context["form"].errors == {
        "dataset": ["Upload a .json, .jsonl, .parquet or .zip file."]
    }
    assert_nothing_written()


def test_malformed_field_map_is_a_form_error(admin_client, project):
    response = admin_client.post(
        import_url(project),
        {"dataset": corpus_upload("query_field.jsonl"), "field_map": "prompt query"},
    )
    assert response.context["form"].errors == {
        "field_map": ["Line 1 is not ours=theirs: 'prompt query'"]
    }
    assert_nothing_written()


@pytest.mark.parametrize("role", ["annotator", "curator"])
def test_members_who_are_not_admins_get_403(client, project, role):
    client.force_login(make_member(project, role=role))
    assert client.get(import_url(project)).status_code == 403
    assert client.post(import_url(project), {"dataset": bundle_zip()}).status_code == 403
    assert_nothing_written()


def test_non_member_gets_404(client, project):
    other = make_project()
    client.force_login(make_member(other, role="admin"))
    assert client.get(import_url(project)).status_code == 404
    assert client.post(import_url(project), {"dataset": bundle_zip()}).status_code == 404
    assert_nothing_written()


def test_unknown_project_gets_404(admin_client):
    assert admin_client.get(reverse("import", args=["no-such-project"])).status_code == 404


def test_anonymous_is_redirected_to_login(client, project):
    url = import_url(project)
    response = client.post(url, {"dataset": bundle_zip()})
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('login')}?next={url}"
    assert_nothing_written()


def test_superuser_may_import_without_membership(client, project):
    client.force_login(make_user(is_superuser=True, is_staff=True))
    response = client.post(import_url(project), {"dataset": bundle_zip()})
    assert response.status_code == 302
    assert project.items.count() == 2


def test_dataset_with_a_separate_images_zip_is_imported(client, tmp_path):
    import io
    import json
    import zipfile

    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from annotate.models import Item
    from tests.factories import make_member, make_project, png_bytes

    project = make_project()
    client.force_login(make_member(project, role="admin"))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("a.png", png_bytes())
    record = {
        "ID": "x1",
        "Text": "q",
        "Image": "a.png",
        "Output1": "a",
        "Output2": "b",
        "Better": "Output1",
        "Category": "vqa",
    }
    response = client.post(
        reverse("import", args=[project.slug]),
        {
            "dataset": SimpleUploadedFile("same.json", json.dumps([record]).encode()),
            "images": SimpleUploadedFile("same.json.zip", buf.getvalue()),
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Item.objects.filter(project=project).count() == 1


def test_images_zip_next_to_a_dataset_zip_is_refused(client):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from tests.factories import make_member, make_project

    project = make_project()
    client.force_login(make_member(project, role="admin"))
    response = client.post(
        reverse("import", args=[project.slug]),
        {
            "dataset": SimpleUploadedFile("data.zip", b"PK\x05\x06" + b"\0" * 18),
            "images": SimpleUploadedFile("images.zip", b"PK\x05\x06" + b"\0" * 18),
        },
    )
    assert response.status_code == 400
    assert b"already holds its images" in response.content


def test_an_empty_upload_is_a_problem_naming_the_file_and_changes_nothing(admin_client, project):
    """An empty dataset (0 bytes) reaches the import, which names the file
    and line as for any other problem (found by the upload fuzz test)."""
    response = admin_client.post(
        import_url(project),
        {"dataset": SimpleUploadedFile("data.json", b""), "format": "", "domain": ""},
    )
    assert response.status_code == 400
    assert response.context["problems"] == ["data.json:1: file is empty"]
    assert not project.items.exists()
