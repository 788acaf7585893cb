import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotate.models import Project
from curation.benchmarks.mmrb2.release_files import ExportConflict, export_mmrb2


class Command(BaseCommand):
    help = (
        "Write a project's MMRB2 items in the published Multimodal RewardBench 2 layout "
        "(<task>.json, images/, input_images/) into a folder. A task file imported and "
        "exported again is the same bytes. --rekey replaces IDs (and response image "
        "names) by label-free ones; the old-to-new map goes to --id-map, not the folder."
    )

    def add_arguments(self, parser):
        parser.add_argument("project")
        parser.add_argument("folder", type=Path)
        parser.add_argument("--rekey", action="store_true", help="label-free IDs")
        parser.add_argument("--salt", default="", help="salt of the re-keyed IDs")
        parser.add_argument("--id-map", type=Path, help="where to write {old: new} IDs")

    def handle(self, *args, **opts):
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project with slug {opts['project']!r}")
        if opts["rekey"] and opts["id_map"] is None:
            raise CommandError("--rekey needs --id-map (the only record of the old IDs)")
        try:
            summary = export_mmrb2(
                project=project, folder=opts["folder"], rekey=opts["rekey"], salt=opts["salt"]
            )
        except ExportConflict as exc:
            raise CommandError(str(exc)) from None
        if opts["id_map"] is not None:
            opts["id_map"].write_text(json.dumps(summary["ids"], indent=2))
        tasks = ", ".join(f"{task}: {n}" for task, n in summary["tasks"].items()) or "no tasks"
        self.stdout.write(self.style.SUCCESS(f"{tasks}; {summary['images']} images"))
