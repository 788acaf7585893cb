"""REST API: importing a dataset into a project."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.api.projects import project_for_api
from annotate.importing import formats
from annotate.importing.history import import_recorded_items
from annotate.importing.options import (
    CONFLICTS,
    DUPLICATES,
    ImportOptions,
    parse_domain_from,
    parse_mapping,
)
from annotate.importing.records import ImportFailed
from annotate.importing.roots import (
    import_server_items,
    project_roots,
    resolve_server_path,
    roots_enabled,
)
from annotate.importing.service import import_uploaded_items
from annotate.projects import ADMIN_ROLES, member_of
from common.api.errors import Rejected, errors
from common.api.input import validated
from common.body_guard import guard_body

# --- Import -------------------------------------------------------------------------------


@guard_body(member_of(ADMIN_ROLES), uploads=True)
class ImportApi(APIView):
    parser_classes = [MultiPartParser]

    class InputSerializer(serializers.Serializer):
        dataset = serializers.FileField(
            required=False,
            help_text="Multimodal RewardBench .json (Better optional), a .jsonl of pairs "
            "(id, prompt, image, chosen/rejected or unlabelled response_1/response_2), a "
            "Hugging Face .parquet, a Multimodal RewardBench 2 task file, a .zip holding one of "
            "them together with its images, or a studio release .zip. Required unless "
            "`server_path` is given.",
        )
        server_path = serializers.CharField(
            required=False,
            default="",
            max_length=4096,
            help_text="Instead of `dataset`: the path of a dataset already on the server, "
            "under one of the import roots a site admin opened to this project "
            "(IMPORT_ROOTS): a file, a release zip or a release folder.",
        )
        server_images = serializers.CharField(
            required=False,
            default="",
            max_length=4096,
            help_text="With `server_path`: the folder of its images under an import root "
            "(default: the dataset's folder).",
        )
        images = serializers.FileField(
            required=False, help_text="A .zip of the images (with a .json/.jsonl dataset)."
        )
        format = serializers.ChoiceField(
            choices=["", *formats.names()], required=False, default="", help_text="Empty: detect."
        )
        domain = serializers.CharField(
            required=False, default="", help_text="Domain slug for files without a category."
        )
        field_map = serializers.CharField(
            required=False,
            default="",
            help_text="ours=theirs pairs, one per line or comma-separated (e.g. prompt=query).",
        )
        duplicates = serializers.ChoiceField(
            choices=list(DUPLICATES),
            required=False,
            default="refuse",
            help_text="Records sharing an ID: refuse (the answer lists them), keep-first, or "
            "suffix (later ones renamed ID#2, ID#3, … in file order; original in "
            "meta.original_id).",
        )
        domain_from = serializers.CharField(
            required=False,
            default="",
            help_text="Derive each record's domain: field:<name>, id-prefix or image-folder.",
        )
        domain_map = serializers.CharField(
            required=False,
            default="",
            help_text="value=domain pairs, one per line or comma-separated "
            "(e.g. mcq=knowledge,long=general_correctness). With id-prefix the longest value "
            "the ID starts with wins.",
        )
        gold_from_label = serializers.BooleanField(required=False, default=False)
        update = serializers.BooleanField(
            required=False, default=False, help_text="The same as conflicts=replace."
        )
        conflicts = serializers.ChoiceField(
            choices=list(CONFLICTS),
            required=False,
            default="refuse",
            help_text="Records whose ID is already in the project with other content: refuse "
            "(the answer names the fields that differ and on how many records), metadata "
            "(update only what annotators never saw: models, reference answer, other "
            "fields), suffix (import them as new items ID#2, …) or replace (items nobody has "
            "claimed; only the metadata of the others). What annotators saw never changes "
            "once an item has votes or claims, nor does its gold answer.",
        )
        cast_votes = serializers.BooleanField(
            required=False,
            default=False,
            help_text="Multimodal RewardBench 2 task files: cast each human_annotations entry "
            "as a vote of a pseudonymous imported annotator (imported-1, …; inactive, cannot "
            "log in).",
        )

        def validate_dataset(self, f):
            if not f.name.lower().endswith(formats.suffixes()):
                raise serializers.ValidationError(formats.upload_hint())
            return f

        def validate_images(self, f):
            if f and not f.name.lower().endswith(".zip"):
                raise serializers.ValidationError("Images must be uploaded as a .zip file.")
            return f

        def validate_field_map(self, text):
            mapping = {}
            for n, part in enumerate(text.replace(",", "\n").splitlines(), start=1):
                if not part.strip():
                    continue
                ours, sep, theirs = part.partition("=")
                if not sep or not ours.strip() or not theirs.strip():
                    raise serializers.ValidationError(f"Entry {n} is not ours=theirs: {part!r}")
                mapping[ours.strip()] = theirs.strip()
            return mapping

        def validate_domain_from(self, text):
            try:
                return parse_domain_from(text)
            except ValueError as exc:
                raise serializers.ValidationError(str(exc)) from None

        def validate_domain_map(self, text):
            try:
                return parse_mapping(text)
            except ValueError as exc:
                raise serializers.ValidationError(str(exc)) from None

        def validate(self, data):
            images = data.get("images")
            if bool(data.get("dataset")) == bool(data["server_path"]):
                raise serializers.ValidationError(
                    {"dataset": "Send a dataset file or a server_path (exactly one)."}
                )
            if data["server_path"] and images:
                raise serializers.ValidationError(
                    {"images": "With server_path, give server_images instead of uploading."}
                )
            if images and data["dataset"].name.lower().endswith(".zip"):
                raise serializers.ValidationError(
                    {
                        "images": "The dataset zip already holds its images; send an images "
                        "zip only with a .json or .jsonl dataset."
                    }
                )
            return data

    class OutputSerializer(serializers.Serializer):
        format = serializers.ChoiceField(choices=formats.names())
        created = serializers.IntegerField()
        updated = serializers.IntegerField()
        unchanged = serializers.IntegerField()
        images_stored = serializers.IntegerField()
        votes_cast = serializers.IntegerField(
            help_text="Published annotations cast as votes of imported annotators."
        )
        duplicates_skipped = serializers.IntegerField(
            help_text="Later records of a repeated ID left out (duplicates=keep-first)."
        )
        duplicates_renamed = serializers.IntegerField(
            help_text="Later records of a repeated ID renamed (duplicates=suffix)."
        )

    @extend_schema(
        operation_id="items_import",
        summary="Import items (admins): all or nothing",
        description="Every record and image is checked first; if anything is wrong the answer "
        "is 400 with code `import_failed`, one entry in `problems` per problem (file, line, "
        "record, field; `count` records have the same problem, the first few are in "
        "`records`) and nothing is written. Importing the same file again changes nothing.",
        request={"multipart/form-data": InputSerializer},
        responses={200: OutputSerializer, **errors(400, 401, 403, 404, 413)},
    )
    def post(self, request, slug):
        project, _ = project_for_api(request.user, slug, ADMIN_ROLES)
        data = validated(self, request)
        if data["server_path"] and not roots_enabled(project):
            raise serializers.ValidationError(
                {
                    "server_path": "Server paths are off for this project: a site admin "
                    "chooses which import roots it may read."
                }
            )
        try:
            if data["server_path"]:
                do_import = import_server_items
                source = {"dataset": data["server_path"], "images": data["server_images"]}
            else:
                do_import = import_uploaded_items
                source = {"dataset": data["dataset"], "images": data.get("images")}
            result = import_recorded_items(
                project=project,
                actor=request.user,
                surface="api",
                do_import=do_import,
                resolve=lambda path: resolve_server_path(path, project_roots(project)),
                **source,
                fmt=data["format"] or None,
                domain=data["domain"] or None,
                field_map=data["field_map"],
                gold_from_label=data["gold_from_label"],
                update=data["update"],
                cast_votes=data["cast_votes"],
                options=ImportOptions(
                    duplicates=data["duplicates"],
                    domain_from=data["domain_from"],
                    domain_map=data["domain_map"],
                    surface="api",
                    conflicts=data["conflicts"],
                ),
            )
        except ImportFailed as exc:
            message = f"The import was refused ({len(exc.problems)} problems); nothing was written."
            if exc.truncated:
                message += f" Stopped looking after {len(exc.problems)} problems."
            raise Rejected(
                message,
                code="import_failed",
                fields={"dataset": [str(p) for p in exc.problems]},
                problems=[
                    {
                        "file": p.file,
                        "line": p.line,
                        "index": p.index,
                        "field": p.field,
                        "message": p.message,
                        "detail": p.detail,
                        "text": str(p),
                        "count": p.count,
                        "records": p.records,
                    }
                    for p in exc.problems
                ],
            ) from None
        return Response(self.OutputSerializer(result).data)
