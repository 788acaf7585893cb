"""The judge runner on a release published to S3-compatible object storage
(moto's server on 127.0.0.1): items and images are read from the bucket."""

from __future__ import annotations

from pathlib import Path

import pytest

from curation.benchmarks import registry
from curation.evaluation.judge_runs import release_reader, run_judge
from curation.models import JudgeRunStatus, ReleaseStatus
from curation.releases.build import build_release
from tests.curation.evaluation.fake_openai import FakeJudge
from tests.curation.evaluation.test_judge_runner import API_KEY, MODEL, make_endpoint, start
from tests.curation.releases import test_release_s3
from tests.curation.releases.test_releases import new_release

pytestmark = pytest.mark.django_db

# The moto server, bucket and S3-backed project fixtures of the release tests.
s3_endpoint, aws_env, bucket = (
    test_release_s3.s3_endpoint,
    test_release_s3.aws_env,
    test_release_s3.bucket,
)
s3_storages, project = test_release_s3.s3_storages, test_release_s3.project


def test_a_judge_runs_on_a_release_in_a_bucket(project, s3_storages, settings):
    settings.JUDGE_BACKOFF_BASE = 0.01
    release = build_release(release_id=new_release(project).pk)
    assert release.status == ReleaseStatus.READY, release.error
    records = registry.get("mrb").judge_records(release)
    read_image = release_reader(release)
    assert read_image(records[0]["Image"]).startswith(b"\x89PNG")
    with pytest.raises(OSError, match="outside the release"):
        read_image("../../images/x.png")
    with FakeJudge(api_key=API_KEY, model=MODEL, records=records) as fake:
        run = run_judge(run_id=start(release, make_endpoint(release, fake), swapped=True).pk)
    assert fake.problems == []
    assert run.status == JudgeRunStatus.COMPLETE, run.error
    assert run.evaluation.accuracy == 1.0
    assert run.evaluation.report["extras"]["consistency"]["rate"] == 1.0
    media = Path(settings.MEDIA_ROOT)
    assert not media.exists() or not any(media.rglob("all_data.json"))
