"""Import roots on a bucket (annotate.importing.roots_s3), on moto's S3
server: a dataset and its images referenced by s3:// paths, confined to the
root's bucket and prefix."""

from __future__ import annotations

import json

import pytest

from annotate.importing.records import ImportFailed
from annotate.importing.roots import import_server_items
from tests import s3_server
from tests.factories import make_project, png_bytes

pytestmark = pytest.mark.django_db

s3_endpoint, aws_env, bucket = s3_server.s3_endpoint, s3_server.aws_env, s3_server.bucket


@pytest.fixture
def root(s3_endpoint, bucket, settings):
    settings.S3_ENDPOINT_URL = s3_endpoint
    settings.IMPORT_ROOTS = [f"s3://{bucket}/datasets"]
    s3 = s3_server.s3_client(s3_endpoint)
    record = {
        "id": "vqa_1",
        "prompt": "What colour?",
        "chosen": "Red.",
        "rejected": "Blue.",
        "image": "img/red.png",
        "category": "vqa",
    }
    for prefix in ("datasets/vl", "elsewhere"):
        s3.put_object(Bucket=bucket, Key=f"{prefix}/data.jsonl", Body=json.dumps(record) + "\n")
        s3.put_object(Bucket=bucket, Key=f"{prefix}/img/red.png", Body=png_bytes())
    return f"s3://{bucket}/datasets"


def test_a_dataset_on_the_bucket_imports_with_its_images(root):
    project = make_project(import_roots=[root])
    result = import_server_items(project=project, dataset=f"{root}/vl/data.jsonl")
    assert (result.created, result.images_stored) == (1, 1)


def test_a_key_outside_the_root_prefix_is_refused(root, bucket):
    with pytest.raises(ImportFailed, match="is not under an import root"):
        import_server_items(
            project=make_project(import_roots=[root]), dataset=f"s3://{bucket}/elsewhere/data.jsonl"
        )
    with pytest.raises(ImportFailed, match="is not under an import root"):
        import_server_items(
            project=make_project(import_roots=[root]), dataset="s3://other-bucket/datasets/x.jsonl"
        )


def test_dot_dot_in_a_key_is_refused(root):
    with pytest.raises(ImportFailed, match="may not contain"):
        import_server_items(
            project=make_project(import_roots=[root]), dataset=f"{root}/../elsewhere/data.jsonl"
        )


def test_a_missing_object_says_so(root):
    with pytest.raises(ImportFailed, match="not found"):
        import_server_items(
            project=make_project(import_roots=[root]), dataset=f"{root}/vl/none.jsonl"
        )


def test_the_command_imports_from_the_bucket(root):
    from django.core.management import call_command

    project = make_project(slug="cli-s3")
    call_command("import_items", "cli-s3", f"{root}/vl/data.jsonl", verbosity=0)
    assert project.items.count() == 1
