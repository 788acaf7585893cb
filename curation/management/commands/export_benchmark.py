import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotate.models import Project
from curation.benchmarks import registry
from curation.benchmarks.base import EvaluationError


class Command(BaseCommand):
    help = (
        "Write a project's items in a benchmark's published layout into a folder, outside "
        "any release. --rekey replaces IDs (and response image names) by label-free ones; "
        "the old-to-new map goes to --id-map, not the folder."
    )

    def add_arguments(self, parser):
        benchmarks = registry.offering("export_project")
        parser.add_argument(
            "benchmark",
            choices=[b.key for b in benchmarks],
            help="; ".join(b.export_help for b in benchmarks),
        )
        parser.add_argument("project")
        parser.add_argument("folder", type=Path)
        parser.add_argument("--rekey", action="store_true", help="label-free IDs")
        parser.add_argument("--salt", default="", help="salt of the re-keyed IDs")
        parser.add_argument("--id-map", type=Path, help="where to write {old: new} IDs")

    def handle(self, *args, **opts):
        benchmark = registry.get(opts["benchmark"])
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project with slug {opts['project']!r}")
        if opts["rekey"] and opts["id_map"] is None:
            raise CommandError("--rekey needs --id-map (the only record of the old IDs)")
        try:
            summary = benchmark.export_project(
                project, opts["folder"], rekey=opts["rekey"], salt=opts["salt"]
            )
        except EvaluationError as exc:
            raise CommandError(str(exc)) from None
        if opts["id_map"] is not None:
            opts["id_map"].write_text(json.dumps(summary["ids"], indent=2))
        self.stdout.write(self.style.SUCCESS(summary["message"]))
