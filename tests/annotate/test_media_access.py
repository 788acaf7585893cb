"""/media/ serves a project's images only to its *active* members (issue 29:
a deactivated member still downloaded them): the item's own image, its
thumbnail and pictures inside its parts alike."""

import hashlib

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.test import Client
from django.urls import reverse

from annotate.models import ImageAsset
from annotate.models.parts import ItemPart
from annotate.setup import team
from tests.factories import make_item, make_member, make_project, make_user, png_bytes

pytestmark = pytest.mark.django_db


def stored_image(color) -> ImageAsset:
    data = png_bytes(color=color)
    sha = hashlib.sha256(data).hexdigest()
    asset = ImageAsset.objects.create(
        sha256=sha,
        file=f"images/{sha[:2]}/{sha}.png",
        thumbnail=f"thumbs/{sha[:2]}/{sha}.webp",
        format="PNG",
        width=32,
        height=24,
        size_bytes=len(data),
    )
    default_storage.save(asset.file, ContentFile(data))
    default_storage.save(asset.thumbnail, ContentFile(png_bytes(fmt="WEBP", color=color)))
    return asset


@pytest.fixture
def project_with_images():
    project = make_project(slug="pictures")
    own = stored_image((10, 200, 10))
    item = make_item(project, image=own)
    # A picture inside a response (issue 24), not the item's own image.
    in_part = stored_image((10, 10, 200))
    ItemPart.objects.create(item=item, slot="response_1", position=9, kind="image", image=in_part)
    return project, [own.file, own.thumbnail, in_part.file, in_part.thumbnail]


def statuses(user, names) -> list[int]:
    client = Client()
    client.force_login(user)
    return [client.get(reverse("media", args=[name])).status_code for name in names]


def test_a_deactivated_member_gets_no_image_and_gets_them_back_when_reactivated(
    project_with_images,
):
    project, names = project_with_images
    admin = make_member(project, role="admin")
    member = make_member(project, role="curator")
    assert statuses(member, names) == [200] * 4
    team.deactivate_member(actor=admin, project=project, user=member)
    assert statuses(member, names) == [404] * 4
    team.reactivate_member(actor=admin, project=project, user=member)
    assert statuses(member, names) == [200] * 4


def test_an_active_membership_elsewhere_with_the_same_image_still_serves_it(project_with_images):
    """Images are stored once and shared: membership of any project that uses
    the image suffices, as long as that membership is active."""
    project, names = project_with_images
    other = make_project(slug="other")
    make_item(other, image=ImageAsset.objects.get(file=names[0]))
    user = make_user()
    make_member(project, user, is_active=False)
    make_member(other, user)
    assert statuses(user, names[:2]) == [200, 200]
    # The picture only the first project uses stays closed.
    assert statuses(user, names[2:]) == [404, 404]


def test_superusers_and_strangers_unchanged(project_with_images):
    _, names = project_with_images
    assert statuses(make_user(is_superuser=True), names) == [200] * 4
    assert statuses(make_user(), names) == [404] * 4
