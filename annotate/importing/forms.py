"""The import page's form."""

from django import forms

from annotate.importing import formats
from annotate.importing.options import (
    FORM_LABELS,
    ImportOptions,
    parse_domain_from,
    parse_mapping,
)


class ImportForm(forms.Form):
    dataset = forms.FileField(
        required=False,
        allow_empty_file=True,  # the import says so, naming file and line
        help_text="Multimodal RewardBench .json, a .jsonl of pairs (chosen/rejected, or "
        "unlabelled response_1/response_2), a Hugging Face .parquet, a benchmark's task file, a "
        ".zip holding one of them with its images, or a studio release .zip.",
    )
    # Shown only when a site admin opened import roots (IMPORT_ROOTS) to the project.
    server_path = forms.CharField(
        required=False,
        max_length=4096,
        help_text="Or a dataset already on the server: its path under an import root "
        "(a file, a release zip or a release folder).",
    )
    server_images = forms.CharField(
        required=False,
        max_length=4096,
        help_text="Folder of its images on the server (default: the dataset's folder).",
    )
    images = forms.FileField(
        required=False,
        allow_empty_file=True,  # the import says so, naming the file
        help_text="A .zip of the images, if they are not inside the dataset zip.",
    )
    format = forms.ChoiceField(
        choices=[("", "Detect")] + [(f, f) for f in formats.names()], required=False
    )
    domain = forms.ChoiceField(
        required=False, help_text="For chosen/rejected files without a category field."
    )
    domain_from = forms.ChoiceField(
        choices=[
            ("", "The file's category field (or Domain above)"),
            ("field", "Another field of the file (name it below)"),
            ("id-prefix", "The ID's prefix (leading letters and underscores)"),
            ("image-folder", "The image's first folder"),
        ],
        required=False,
        label=FORM_LABELS["domain_from"],
        help_text="Where each record's domain comes from.",
    )
    domain_from_field = forms.CharField(
        required=False,
        max_length=200,
        label="Domain field",
        help_text='With "Another field": the field\'s name (e.g. subset).',
    )
    domain_map = forms.CharField(
        required=False,
        label=FORM_LABELS["domain_map"],
        help_text="value=domain, one per line or comma-separated (e.g. mcq=knowledge). "
        "Values that are domain slugs need none.",
        widget=forms.Textarea(attrs={"rows": 3}),
    )
    duplicates = forms.ChoiceField(
        choices=[
            ("refuse", "Refuse the file, listing them"),
            ("keep-first", "Keep the first record of each ID"),
            ("suffix", "Keep all, renaming later ones ID#2, ID#3, …"),
        ],
        initial="refuse",
        required=False,
        label=FORM_LABELS["duplicates"],
        help_text="Records that share an ID.",
    )
    field_map = forms.CharField(
        required=False,
        help_text="Optional, one per line: ours=theirs (e.g. prompt=query).",
        widget=forms.Textarea(attrs={"rows": 3}),
    )
    gold_from_label = forms.BooleanField(
        required=False,
        help_text="Treat the file's chosen response as gold (a ranking: the response ranked "
        "first, none when the first place is tied).",
    )
    conflicts = forms.ChoiceField(
        choices=[
            ("refuse", "Refuse the file, naming the fields that differ"),
            ("metadata", "Update only what annotators never saw (models, other fields)"),
            ("suffix", "Import them as new items, renamed ID#2, …"),
            ("replace", "Replace items nobody has claimed; only the metadata of the others"),
        ],
        initial="refuse",
        required=False,
        label=FORM_LABELS["conflicts"],
        help_text="Records whose ID is already in the project with other content. What "
        "annotators saw (text, images, domain) never changes once an item has votes or "
        "claims, nor does its gold answer; its metadata may.",
    )
    cast_votes = forms.BooleanField(
        required=False,
        label="Cast published annotations as votes",
        help_text="Formats with per-annotator labels: each published label becomes a vote of a "
        "pseudonymous imported annotator (imported-1, imported-2, …; they cannot log in). A "
        "ranked file's rankings become one ranking (or pick) of imported-1 per item.",
    )
    # A refused attempt's files, kept on the server (annotate.importing.staging).
    staged = forms.CharField(required=False, widget=forms.HiddenInput, max_length=64)

    def __init__(self, *args, domains=(), server_paths=False, staged=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.staged = staged  # a refused attempt's files (annotate.importing.staging)
        self.fields["domain"].choices = [("", "From the file")] + [
            (d.slug, d.title) for d in domains
        ]
        # server_paths: the project may read some import root (roots_enabled);
        # without, the fields are not there and a posted path is ignored.
        if not server_paths:
            del self.fields["server_path"], self.fields["server_images"]

    def clean_dataset(self):
        f = self.cleaned_data["dataset"]
        if f and not f.name.lower().endswith(formats.suffixes()):
            raise forms.ValidationError(formats.upload_hint())
        return f

    def clean_images(self):
        f = self.cleaned_data.get("images")
        if f and not f.name.lower().endswith(".zip"):
            raise forms.ValidationError("Images must be uploaded as a .zip file.")
        return f

    def clean(self):
        data = super().clean()
        dataset, images = data.get("dataset"), data.get("images")
        server_path = data.get("server_path")
        staged = self.staged.dataset if self.staged else None
        if not dataset and not staged and not server_path and "dataset" not in self.errors:
            self.add_error("dataset", "Upload a dataset file or give its server path.")
        if dataset and server_path:
            self.add_error("server_path", "Upload a file or give a server path, not both.")
        if server_path and images:
            self.add_error("images", "Give the images' server folder instead of uploading them.")
        if dataset and images and dataset.name.lower().endswith(".zip"):
            self.add_error(
                "images",
                "The dataset zip already holds its images; upload the images zip only "
                "with a .json or .jsonl dataset.",
            )
        return data

    def clean_domain_from(self):
        kind = self.cleaned_data["domain_from"]
        if kind != "field":
            return kind
        name = self.data.get(self.add_prefix("domain_from_field"), "").strip()
        if not name:
            raise forms.ValidationError("Name the field the domain comes from.")
        return parse_domain_from(f"field:{name}")

    def clean_domain_map(self):
        try:
            return parse_mapping(self.cleaned_data["domain_map"])
        except ValueError as exc:
            raise forms.ValidationError(f"Domain map: {exc}.") from None

    def import_options(self) -> ImportOptions:
        data = self.cleaned_data
        return ImportOptions(
            duplicates=data["duplicates"] or "refuse",
            domain_from=data["domain_from"],
            domain_map=data["domain_map"],
            surface="form",
            conflicts=data["conflicts"] or "refuse",
        )

    def clean_field_map(self):
        mapping = {}
        for n, line in enumerate(self.cleaned_data["field_map"].splitlines(), start=1):
            if not line.strip():
                continue
            ours, sep, theirs = line.partition("=")
            if not sep or not ours.strip() or not theirs.strip():
                raise forms.ValidationError(f"Line {n} is not ours=theirs: {line!r}")
            mapping[ours.strip()] = theirs.strip()
        return mapping
