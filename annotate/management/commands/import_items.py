from functools import partial
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotate.importing.records import ImportFailed
from annotate.importing.roots import import_server_items
from annotate.importing.service import import_items_from_paths
from annotate.models import Project


class Command(BaseCommand):
    help = (
        "Import items from a Multimodal RewardBench JSON array, a chosen/rejected JSONL "
        "file, a Hugging Face .parquet file (or a zip holding a JSON/JSONL file with its "
        "images), or a studio release (zip or folder). Atomic: nothing is written unless "
        "the whole file is valid. Re-importing the same file is a no-op."
    )

    def add_arguments(self, parser):
        parser.add_argument("project", help="project slug")
        parser.add_argument(
            "dataset",
            help=".json, .jsonl, .parquet, a .zip with one inside, or a release zip/folder; "
            "or s3://bucket/key under an s3:// import root (IMPORT_ROOTS)",
        )
        parser.add_argument(
            "--images", help="folder or zip (or s3:// prefix) that image paths resolve in"
        )
        parser.add_argument("--format", choices=["mrb", "pairs"], help="default: detect")
        parser.add_argument("--domain", help="domain slug for every record (pairs format)")
        parser.add_argument(
            "--field-map",
            action="append",
            default=[],
            metavar="OURS=THEIRS",
            help="read our field OURS from the file's field THEIRS, e.g. prompt=query, "
            "category=subset (repeatable)",
        )
        parser.add_argument("--seed", type=int, help="shuffle seed (default: the project's)")
        parser.add_argument(
            "--gold-from-label",
            action="store_true",
            help="use the file's chosen response as the gold answer (pairs format)",
        )
        parser.add_argument(
            "--update", action="store_true", help="replace items whose content changed"
        )

    def handle(self, *args, **opts):
        try:
            project = Project.objects.get(slug=opts["project"])
        except Project.DoesNotExist:
            raise CommandError(f"no project with slug {opts['project']!r}") from None
        field_map = {}
        for pair in opts["field_map"]:
            ours, sep, theirs = pair.partition("=")
            if not sep or not ours or not theirs:
                raise CommandError(f"--field-map {pair!r} is not OURS=THEIRS")
            field_map[ours.strip()] = theirs.strip()
        bar = tqdm(desc="validating", unit="item", disable=opts["verbosity"] == 0)
        try:
            dataset, images = opts["dataset"], opts["images"]
            if dataset.startswith("s3://"):
                run = partial(import_server_items, dataset=dataset, images=images)
            else:
                images = Path(images) if images else None
                run = partial(import_items_from_paths, dataset=Path(dataset), images=images)
            result = run(
                project=project,
                fmt=opts["format"],
                domain=opts["domain"],
                field_map=field_map,
                seed=opts["seed"],
                gold_from_label=opts["gold_from_label"],
                update=opts["update"],
                progress=bar.update,
            )
        except ImportFailed as exc:
            bar.close()
            raise CommandError(f"import failed, nothing was written:\n{exc}") from None
        bar.close()
        self.stdout.write(self.style.SUCCESS(f"{Path(opts['dataset']).name}: {result.summary()}"))
