import time

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotate.models import Project
from curation.models import Release, ReleaseStatus
from curation.releases.build import build_release
from curation.releases.service import ReleaseError, create_release


class Command(BaseCommand):
    help = (
        "Build a release of a project (creates it if the version is new; rebuilds a failed "
        "one). Runs in this process with a progress bar."
    )

    def add_arguments(self, parser):
        parser.add_argument("project")
        parser.add_argument("version")
        parser.add_argument("--notes", default="")
        parser.add_argument(
            "--domain", action="append", help="domain slug (repeatable; default all)"
        )
        parser.add_argument("--seed", type=int, help="default: the project's seed")
        parser.add_argument("--user", help="username recorded as the creator")
        parser.add_argument(
            "--rekey",
            action="store_true",
            help="label-free IDs in the files (a new release only); the map is on the "
            "release page and in the API, never in the files",
        )

    def handle(self, *args, **opts):
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project with slug {opts['project']!r}")
        release = Release.objects.filter(project=project, version=opts["version"]).first()
        if release is None:
            user = None
            if opts["user"]:
                user = get_user_model().objects.filter(username=opts["user"]).first()
            try:
                from django.db import transaction

                with transaction.atomic():
                    release = create_release(
                        project=project,
                        version=opts["version"],
                        notes=opts["notes"],
                        domains=opts["domain"]
                        or list(project.domains.values_list("slug", flat=True)),
                        seed=project.seed if opts["seed"] is None else opts["seed"],
                        user=user,
                        enqueue=False,
                        rekey=opts["rekey"],
                    )
            except ReleaseError as exc:
                raise CommandError(str(exc)) from None
        elif opts["rekey"] and not release.rekeyed:
            raise CommandError(
                f"{release.version} exists without re-keyed IDs; releases are immutable"
            )
        if release.status == ReleaseStatus.READY:
            self.stdout.write(f"{release.version} is already ready: {release.sha256}")
            return
        started = time.monotonic()
        bar = tqdm(
            desc=f"building {release.version}", unit="record", disable=opts["verbosity"] == 0
        )
        try:
            release = build_release(release_id=release.pk, progress=bar)
        except Exception as exc:
            bar.close()
            raise CommandError(f"release failed, nothing was published: {exc}") from None
        bar.close()
        self.stdout.write(
            self.style.SUCCESS(
                f"{release.version}: {release.manifest.get('total', 0)} records, "
                f"{release.size_bytes} bytes, sha256 {release.sha256} "
                f"({time.monotonic() - started:.1f} s)"
            )
        )
