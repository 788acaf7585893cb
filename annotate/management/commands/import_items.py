from functools import partial
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotate.importing import formats
from annotate.importing.options import (
    CONFLICTS,
    DUPLICATES,
    ImportOptions,
    parse_domain_from,
    parse_mapping,
)
from annotate.importing.records import ImportFailed
from annotate.importing.roots import import_server_items
from annotate.importing.service import import_items_from_paths
from annotate.models import Project


class Command(BaseCommand):
    help = (
        "Import items from a Multimodal RewardBench JSON array (ID, Text, Image, Output1, "
        "Output2, Category; Better optional), a JSONL/JSON file of pairs (id, prompt, image "
        "or images: [one path], and chosen + rejected or, unlabelled, response_1 + response_2; "
        "optional category, chosen_reason, rejected_reason, chosen_model, rejected_model, "
        "model_1, model_2, reference_answer), a Hugging Face .parquet file, a Multimodal "
        "RewardBench 2 task file, a zip holding one with its images, or a studio release (zip "
        "or folder). "
        "Atomic: nothing is written unless the whole file is valid. Re-importing the same "
        "file is a no-op. Same content under two IDs makes two items."
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
        parser.add_argument("--format", choices=formats.names(), help="default: detect")
        parser.add_argument("--domain", help="domain slug for every record (pairs format)")
        parser.add_argument(
            "--field-map",
            action="append",
            default=[],
            metavar="OURS=THEIRS",
            help="read our field OURS from the file's field THEIRS, e.g. prompt=query, "
            "category=subset (repeatable)",
        )
        parser.add_argument(
            "--duplicates",
            choices=DUPLICATES,
            default="refuse",
            help="records sharing an ID: refuse the file (default, listing them), keep-first "
            "(later ones left out), or suffix (later ones renamed ID#2, ID#3, ... in file order, "
            "skipping IDs the file already uses; the original ID kept in meta.original_id)",
        )
        parser.add_argument(
            "--domain-from",
            default="",
            metavar="field:NAME|id-prefix|image-folder",
            help="derive each record's domain from a field, the ID's prefix (leading letters "
            "and underscores: hallucination_pair-12 -> hallucination_pair) or the image's "
            "first folder (mcq/1.png -> mcq), through --domain-map",
        )
        parser.add_argument(
            "--domain-map",
            action="append",
            default=[],
            metavar="VALUE=DOMAIN,...",
            help="map derived values to domain slugs, e.g. 'long=general_correctness,"
            "mcq=knowledge' (repeatable); with id-prefix the longest VALUE the ID starts with "
            "wins; values that are domain slugs need no entry; without --domain-from it maps "
            "the category field",
        )
        parser.add_argument("--seed", type=int, help="shuffle seed (default: the project's)")
        parser.add_argument(
            "--gold-from-label",
            action="store_true",
            help="use the file's chosen response as the gold answer (pairs format)",
        )
        parser.add_argument("--update", action="store_true", help="the same as --conflicts=replace")
        parser.add_argument(
            "--conflicts",
            choices=CONFLICTS,
            default="refuse",
            help="records whose ID exists with other content: refuse (default), metadata "
            "(update only what annotators never saw), suffix (import them as new items "
            "ID#2, …) or replace (items nobody has claimed; only the metadata of the others)",
        )
        parser.add_argument(
            "--cast-votes",
            action="store_true",
            help="Multimodal RewardBench 2 task files: cast human_annotations as votes of "
            "imported annotators",
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
        try:
            domain_from = parse_domain_from(opts["domain_from"])
        except ValueError as exc:
            raise CommandError(f"--domain-from {exc}") from None
        try:
            domain_map = parse_mapping(",".join(opts["domain_map"]))
        except ValueError as exc:
            raise CommandError(f"--domain-map: {exc}") from None
        options = ImportOptions(
            duplicates=opts["duplicates"],
            domain_from=domain_from,
            domain_map=domain_map,
            surface="cli",
            conflicts=opts["conflicts"],
        )
        bar = tqdm(desc="validating", unit="item", disable=opts["verbosity"] == 0)
        try:
            dataset, images = opts["dataset"], opts["images"]
            if dataset.startswith("s3://"):
                # The operator has a shell: every site root, not just the project's.
                run = partial(
                    import_server_items,
                    dataset=dataset,
                    images=images,
                    roots=list(settings.IMPORT_ROOTS),
                )
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
                cast_votes=opts["cast_votes"],
                options=options,
                progress=bar.update,
            )
        except ImportFailed as exc:
            bar.close()
            raise CommandError(f"import failed, nothing was written:\n{exc}") from None
        bar.close()
        self.stdout.write(self.style.SUCCESS(f"{Path(opts['dataset']).name}: {result.summary()}"))
