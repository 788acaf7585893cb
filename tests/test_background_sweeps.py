"""The sweeps every worker sends when it (re)connects to the broker: work whose
message never reached the broker is queued again, and done once."""

import pytest
from django.utils import timezone

from annotate.models import ImageAsset
from annotate.tasks import requeue_missing_thumbnails
from curation.agreement.reports import request_agreement_refresh
from curation.models import AgreementCache, Release, ReleaseStatus
from curation.releases.service import create_release
from curation.tasks import requeue_unsent_work
from tests.curation.releases.test_releases import make_release_project
from tests.factories import make_item, make_project

pytestmark = pytest.mark.django_db


def test_images_whose_thumbnail_task_was_lost_get_their_thumbnails():
    item = make_item(make_project())
    assert item.image.thumbnail == ""  # as if the import's message never reached the broker
    assert requeue_missing_thumbnails() == 1
    assert ImageAsset.objects.get(pk=item.image_id).thumbnail != ""
    assert requeue_missing_thumbnails() == 0


def test_pending_releases_and_requested_refreshes_are_queued_again_but_live_builds_are_not(
    tmp_path,
):
    project = make_release_project(tmp_path)

    def release(version):
        return create_release(
            project=project,
            version=version,
            notes="",
            domains=["vqa"],
            seed=1,
            user=None,
            enqueue=False,  # the broker was down: only the row exists
        )

    pending, live = release("v1"), release("v2")
    Release.objects.filter(pk=live.pk).update(
        status=ReleaseStatus.BUILDING, started_at=timezone.now()
    )
    # Requested, but the message is lost (on_commit never runs in this test).
    assert request_agreement_refresh(project=project)
    assert AgreementCache.objects.get(project=project).requested_at is not None

    assert requeue_unsent_work() == 2  # tasks run inline in the test session
    assert Release.objects.get(pk=pending.pk).status == ReleaseStatus.READY
    assert Release.objects.get(pk=live.pk).status == ReleaseStatus.BUILDING
    cache = AgreementCache.objects.get(project=project)
    assert cache.requested_at is None and cache.computed_at is not None
    assert requeue_unsent_work() == 0
