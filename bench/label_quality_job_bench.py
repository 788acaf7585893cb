"""Label-quality job benchmark (issue 23): the background job end to end in a
worker-like process, on the embedded SQLite database.

    .venv/bin/python bench/label_quality_job_bench.py [--items 100000] [--votes 5]

Builds, in a temporary SQLite database (the default, serverless setup), a
project of --items items with --votes current votes each from five simulated
annotators (curation/quality/simulation.py: accuracy 0.55-0.95, one with a left
bias), agreed verdicts with the majority's side, one release with every item
and three leaderboard entries (the simulation's three judges) with their
per-item probabilities. Rows are written with bulk_create.

Then a fresh child process (like a Celery worker: Django set up, nothing
else loaded) runs curation.quality.service.compute_label_quality, the job's
whole service: read the votes and the ensemble, CROWDLAB + Dawid-Skene, write
one ItemQuality row per item. Reported: its wall time and the child's peak RSS
(targets: <= 30 s, <= 1 GB). Then the suspected-errors page, as a curator
through django.test.Client, DEBUG off: median of 20 requests and its query
count (target <= 150 ms, constant queries).

Needs the quality extra: pip install -e ".[quality]".
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def environ(db: Path, tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("REDIS_URL", None)  # nothing may reach someone's Redis or a real broker
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=f"sqlite:///{db}",
        DATA_DIR=str(tmp / "data"),
        MEDIA_ROOT=str(tmp / "media"),
        DEBUG="false",
        LOG_LEVEL="WARNING",
        PYTHONPATH=str(ROOT),
    )
    return env


def setup(db: Path, tmp: Path) -> None:
    os.environ.update(environ(db, tmp))
    os.environ.pop("REDIS_URL", None)
    import django

    django.setup()


def build(n_items: int, votes: int) -> dict:
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import transaction
    from django.utils import timezone

    from annotate.models import Assignment, ImageAsset, Item, Judgement, Membership, Project
    from curation.models import Evaluation, ItemPrediction, Release, ReleaseItem, Verdict
    from curation.quality.simulation import JUDGE_ACCURACY, make_world

    call_command("migrate", verbosity=0, interactive=False)
    now = timezone.now()
    world = make_world(n_items=n_items, votes_per_item=votes, seed=1)
    users = get_user_model()
    with transaction.atomic():
        project = Project.objects.create(
            slug="lq", name="Label quality bench", votes_per_item=votes
        )
        domain = project.create_default_domains()[0]
        image = ImageAsset.objects.create(
            sha256="0" * 64, file="images/00/0.png", format="PNG", width=1, height=1, size_bytes=1
        )
        annotators = users.objects.bulk_create([users(username=f"a{n}") for n in range(5)])
        curator = users.objects.create(username="curator")
        Membership.objects.bulk_create(
            [
                Membership(project=project, user=u, role="annotator", pseudonym=f"A{n}")
                for n, u in enumerate(annotators)
            ]
            + [Membership(project=project, user=curator, role="curator", pseudonym="C")]
        )
        items = Item.objects.bulk_create(
            [
                Item(
                    project=project,
                    domain=domain,
                    external_id=f"item_{i}",
                    prompt="p",
                    image=image,
                    image_path="x.png",
                    response_1="a",
                    response_2="b",
                    content_hash=f"{i:064d}",
                    votes_needed=votes,
                )
                for i in range(n_items)
            ],
            batch_size=5000,
        )
        ids = [i.pk for i in items]
        assignments = Assignment.objects.bulk_create(
            [
                Assignment(
                    item_id=ids[i],
                    annotator=annotators[a],
                    status="submitted",
                    display_order="12",
                    claimed_at=now,
                    lease_expires_at=now + timedelta(minutes=30),
                    submitted_at=now,
                )
                for i, a, _ in world.votes
            ],
            batch_size=5000,
        )
        Judgement.objects.bulk_create(
            [
                Judgement(assignment=asg, choice=choice)
                for asg, (_, _, choice) in zip(assignments, world.votes, strict=True)
            ],
            batch_size=5000,
        )
        Verdict.objects.bulk_create(
            [
                Verdict(
                    item_id=ids[i],
                    project=project,
                    status="agreed",
                    final_choice=world.current[i],
                    provenance="majority",
                )
                for i in range(n_items)
            ],
            batch_size=5000,
        )
        release = Release.objects.create(project=project, version="v1", domains=[domain.slug])
        ReleaseItem.objects.bulk_create(
            [
                ReleaseItem(
                    release=release,
                    item_id=ids[i],
                    external_id=f"item_{i}",
                    domain=domain.slug,
                    chosen=world.current[i],
                    better="Output1",
                    provenance="majority",
                )
                for i in range(n_items)
            ],
            batch_size=5000,
        )
        entries = []
        for j, accuracy in enumerate(JUDGE_ACCURACY):
            e = Evaluation.objects.create(
                release=release, name=f"judge-{accuracy}", predictions="p"
            )
            entries.append(e.pk)
            ItemPrediction.objects.bulk_create(
                [
                    ItemPrediction(
                        evaluation=e,
                        item_id=ids[i],
                        external_id=f"item_{i}",
                        category=domain.export_category,
                        sub_bucket=domain.export_category,
                        chosen=world.current[i],
                        choice="1" if (world.judge_p1[j][i] or 0.5) > 0.5 else "2",
                        correct=True,
                        p1=world.judge_p1[j][i],
                    )
                    for i in range(n_items)
                ],
                batch_size=5000,
            )
    return {"project": project.pk, "curator": curator.pk, "entries": entries}


def child(db: Path, tmp: Path, project_id: int) -> None:
    """The worker: run the job's service once and report time and peak RSS."""
    import warnings

    setup(db, tmp)
    warnings.simplefilter("ignore", DeprecationWarning)
    from curation.quality.service import compute_label_quality

    start = time.perf_counter()
    status = compute_label_quality(project_id=project_id)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"status": status, "seconds": seconds, "maxrss_kib": peak}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--votes", type=int, default=5)
    parser.add_argument(
        "--reuse", metavar="DIR", help="measure again on the folder a previous run left"
    )
    parser.add_argument(
        "--child", nargs=3, metavar=("DB", "TMP", "PROJECT"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        child(Path(args.child[0]), Path(args.child[1]), int(args.child[2]))
        return 0

    tmp = Path(args.reuse) if args.reuse else Path(tempfile.mkdtemp(prefix="lq-bench-"))
    db = tmp / "bench.sqlite3"
    setup(db, tmp)
    from curation.quality.label_quality import libraries_available

    if not libraries_available():
        sys.exit('The quality extra is not installed: pip install -e ".[quality]"')
    if args.reuse:
        from django.core.management import call_command

        from curation.models import Evaluation

        call_command("migrate", verbosity=0, interactive=False)
        project = Evaluation.objects.select_related("release__project").first().release.project
        built = {
            "project": project.pk,
            "curator": project.memberships.get(role="curator").user_id,
            "entries": list(
                Evaluation.objects.filter(release__project=project).values_list("pk", flat=True)
            ),
        }
        args.items = project.items.count()
    else:
        print(f"building {args.items:,} items x {args.votes} votes, 3 entries ...", file=sys.stderr)
        t0 = time.perf_counter()
        built = build(args.items, args.votes)
        print(f"  built in {time.perf_counter() - t0:.0f} s (folder {tmp})", file=sys.stderr)
    from annotate.models import Project
    from curation.quality.service import request_label_quality

    project = Project.objects.get(pk=built["project"])
    request_label_quality(project=project, evaluations=built["entries"])
    from django.db import connections

    connections.close_all()
    proc = subprocess.run(
        [sys.executable, __file__, "--child", str(db), str(tmp), str(project.pk)],
        env=environ(db, tmp),
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if proc.returncode:
        sys.stderr.write(proc.stdout + proc.stderr)
        return 1
    job = json.loads(proc.stdout.strip().splitlines()[-1])

    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    client.force_login(get_user_model().objects.get(pk=built["curator"]))
    url = f"/p/{project.slug}/label-quality/"
    times = []
    for n in range(21):
        with CaptureQueriesContext(connection) as ctx:
            start = time.perf_counter()
            response = client.get(url)
            elapsed = time.perf_counter() - start
        assert response.status_code == 200, response.status_code
        if n:
            times.append(elapsed)
    page_ms = statistics.median(times) * 1000
    peak_mb = job["maxrss_kib"] * 1024 / 1e6
    fast, small = job["seconds"] <= 30, peak_mb <= 1000
    print(f"label quality job ({job['status']}), {args.items:,} items x {args.votes} votes:")
    print(f"  wall time {job['seconds']:.1f} s (target <= 30 s): {'yes' if fast else 'NO'}")
    print(f"  worker peak RSS {peak_mb:.0f} MB (target <= 1000 MB): {'yes' if small else 'NO'}")
    print(
        f"suspected-errors page: median {page_ms:.0f} ms of 20 (target <= 150 ms): "
        f"{'yes' if page_ms <= 150 else 'NO'}; {len(ctx)} queries"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
