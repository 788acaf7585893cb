from django.core.management.base import BaseCommand, CommandError

from annotate.models import Project
from curation.benchmarks import registry
from curation.evaluation.judge_runs import (
    JudgeRunError,
    resume_judge_run,
    run_judge,
    start_judge_run,
)
from curation.models import JudgeEndpoint, JudgeRun, JudgeRunStatus, Release


class Command(BaseCommand):
    help = (
        "Run one of a project's judge endpoints over a ready release, in this process (no "
        "worker needed). Run again with the same --name to resume a failed or cancelled run: "
        "answers already stored are not requested again."
    )

    def add_arguments(self, parser):
        parser.add_argument("project")
        parser.add_argument("version")
        parser.add_argument("--endpoint", required=True, help="the endpoint's name")
        parser.add_argument("--name", help="leaderboard name (default: the endpoint's model)")
        parser.add_argument("--swapped", action="store_true", help="also judge swapped order")
        parser.add_argument("--concurrency", type=int, default=4)
        parser.add_argument("--video-as", choices=["frames", "video"], default="frames",
                            help="send videos as sampled frames or as the video file")  # fmt: skip
        parser.add_argument("--video-frames", type=int, default=8, help="frames per video (1-64)")
        parser.add_argument(
            "--scoring",
            choices=registry.known_keys(),
            help="the benchmark whose items are judged and whose rules score the run "
            "(default: the release's most specific one, e.g. its task files before its "
            "records); some judge every item in both orders",
        )

    def handle(self, *args, **opts):
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project with slug {opts['project']!r}")
        release = Release.objects.filter(project=project, version=opts["version"]).first()
        if release is None:
            raise CommandError(f"{project.slug} has no release {opts['version']!r}")
        endpoint = JudgeEndpoint.objects.filter(project=project, name=opts["endpoint"]).first()
        if endpoint is None:
            raise CommandError(f"{project.slug} has no judge endpoint {opts['endpoint']!r}")
        name = opts["name"] or endpoint.model
        run = JudgeRun.objects.filter(release=release, name=name).first()
        if run is not None and run.status == JudgeRunStatus.COMPLETE:
            raise CommandError(f"{name!r} is already complete on {release.version}")
        if run is None:
            try:
                run = start_judge_run(
                    release=release,
                    endpoint=endpoint,
                    name=name,
                    swapped=opts["swapped"],
                    concurrency=opts["concurrency"],
                    scoring=opts["scoring"],
                    video_as=opts["video_as"],
                    video_frames=opts["video_frames"],
                    user=None,
                    enqueue=False,
                )
            except JudgeRunError as exc:
                raise CommandError(str(exc)) from None
        elif not resume_judge_run(run=run, enqueue=False) and run.status != JudgeRunStatus.PENDING:
            raise CommandError(f"{name!r} is {run.status} in another process; cancel it first")
        run = run_judge(run_id=run.pk)
        self.stdout.write(
            f"{run.name}: {run.status}, {run.progress_done} of {run.progress_total} answered, "
            f"{run.n_errors} failed"
        )
        if run.status != JudgeRunStatus.COMPLETE:
            raise CommandError(run.error or f"run {run.status}")
        accuracy = run.evaluation.accuracy
        self.stdout.write(f"accuracy: {'—' if accuracy is None else f'{100 * accuracy:.2f}%'}")
