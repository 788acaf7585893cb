"""Golden imports (issue 32 item 3): importing fixed fixtures of every input
format (MRB JSON, chosen/rejected JSONL, Hugging Face parquet, MMRB2 task
files with their published annotations, a release folder and zip) gives
exactly the items, parts, images, imported votes and verdicts that the code
before the format seam gave. The golden file was written by main's code
(``GOLDEN_WRITE=1 pytest tests/annotate/importing/test_golden_imports.py``)
before the seam, and is compared as is after it.

Left out of the dump: primary keys, timestamps and the stored HTML (a cache
of the renderer, made by a task)."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest
from django.db import models

from annotate.importing.options import ImportOptions
from annotate.importing.service import import_items_from_paths
from annotate.models import ImageAsset, Item, ItemPart
from annotate.models.votes import Assignment, Judgement
from curation.models import Verdict
from tests.annotate.importing.test_import import write_jsonl, write_mrb
from tests.annotate.importing.test_import_parquet import vl_rewardbench
from tests.annotate.importing.test_mmrb2 import published_fixture
from tests.factories import make_project, mrb_record, pairs_record, png_bytes

pytestmark = pytest.mark.django_db

GOLDEN = Path(__file__).with_name("golden_imports.json")
SKIPPED = {"id", "created_at", "updated_at", "submitted_at", "claimed_at", "lease_expires_at"}
SKIPPED |= {"html", "prompt_html", "response_1_html", "response_2_html", "rendered_version"}
SKIPPED |= {"file", "thumbnail"}  # storage names (the SHA-256 says the same)


def _natural(field, value):
    """A foreign key as what names it, not its primary key."""
    if value is None:
        return None
    model = field.related_model
    if model is Item:
        return Item.objects.filter(pk=value).values_list("external_id", flat=True).first()
    if model is ImageAsset:
        return ImageAsset.objects.filter(pk=value).values_list("sha256", flat=True).first()
    if model is Assignment:
        row = Assignment.objects.filter(pk=value).values_list(
            "item__external_id", "annotator__username"
        )
        return list(row.first() or ())
    for name in ("slug", "username", "external_id", "sha256"):
        if any(f.name == name for f in model._meta.concrete_fields):
            return model.objects.filter(pk=value).values_list(name, flat=True).first()
    return "<fk>"


def _rows(model, queryset, pair_terms: tuple[str, ...] = (), skip=frozenset()) -> list[dict]:
    """Every concrete field of each row (foreign keys by what names them),
    plus `pair_terms`: the golden was recorded before votes were stored in
    slot terms (issue 32), so a pair's order and per-slot answers are read
    through the pair accessors and compared in the old terms."""
    out = []
    for obj in queryset:
        row = {name: getattr(obj, name) for name in pair_terms}
        for f in model._meta.concrete_fields:
            if f.name in SKIPPED or f.name in skip:
                continue
            value = getattr(obj, f.attname)
            if isinstance(f, models.ForeignKey):
                value = _natural(f, value)
            elif not isinstance(value, str | int | float | bool | dict | list | type(None)):
                value = str(value)
            row[f.name] = value
        out.append(row)
    return sorted(out, key=lambda r: json.dumps(r, sort_keys=True))


def dump(project) -> dict:
    items = Item.objects.filter(project=project)
    return {
        "items": _rows(Item, items),
        "parts": _rows(ItemPart, ItemPart.objects.filter(item__project=project)),
        "images": _rows(
            ImageAsset, ImageAsset.objects.filter(parts__item__project=project).distinct()
        ),
        "assignments": _rows(
            Assignment,
            Assignment.objects.filter(item__project=project),
            pair_terms=("shown_swapped",),
            skip={"display_order"},
        ),
        "judgements": _rows(
            Judgement,
            Judgement.objects.with_pair_answers().filter(assignment__item__project=project),
            pair_terms=("grade_1", "grade_2", "correct_1", "correct_2"),
            skip={"task"},
        ),
        "verdicts": _rows(Verdict, Verdict.objects.filter(item__project=project)),
        "domains": sorted(project.domains.values_list("slug", "export_category", "kind")),
    }


def _summary(result) -> dict:
    return {
        "format": result.format,
        "created": result.created,
        "updated": result.updated,
        "unchanged": result.unchanged,
        "images_stored": result.images_stored,
        "votes_cast": result.votes_cast,
        "summary": result.summary(),
    }


def _release_folder(root: Path) -> Path:
    folder = root / "release"
    (folder / "images" / "vqa").mkdir(parents=True)
    (folder / "images" / "vqa" / "a.png").write_bytes(png_bytes())
    (folder / "images" / "vqa" / "b.png").write_bytes(png_bytes(color=(0, 0, 255)))
    records = [
        mrb_record("vqa_r1", Image="images/vqa/a.png", Better="Output1"),
        mrb_record("vqa_r2", Image="images/vqa/b.png", Better="Output2", Output1="B one."),
        mrb_record("math_r3", Image="images/vqa/a.png", Category="reasoning", Better="Output2"),
    ]
    (folder / "all_data.json").write_text(json.dumps(records, indent=2))
    manifest = {"format": "multimodal-rewardbench", "project": "src", "release": "v1", "seed": 7}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def _zip(folder: Path, out: Path) -> Path:
    with zipfile.ZipFile(out, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, f"rel/{path.relative_to(folder).as_posix()}")
    return out


def scenarios(tmp_path: Path):
    """(name, project slug, a function importing into it) in order."""
    mrb_dir = tmp_path / "mrb"
    mrb_dir.mkdir()
    mrb_rows = [
        mrb_record("vqa_1", Extra={"k": [1, 2]}),
        mrb_record("vqa_2", Better=None),
        mrb_record("math_3", Category="reasoning", Output2="x^2"),
        mrb_record("vqa_1", Output1="repeated"),
    ]
    mrb = write_mrb(mrb_dir, mrb_rows)
    changed = write_mrb(
        mrb_dir,
        [mrb_record("vqa_1", Extra={"k": [3]}, Better="Output2"), *mrb_rows[1:3]],
        name="changed.json",
    )
    seen_changed = write_mrb(
        mrb_dir, [mrb_record("vqa_2", Output2="Other.")], name="seen_changed.json"
    )
    pairs_dir = tmp_path / "pairs"
    pairs_dir.mkdir()
    pairs = write_jsonl(
        pairs_dir,
        [
            pairs_record("p1", chosen_model="m-a", rejected_model="m-b", reference_answer="42"),
            pairs_record("p2", chosen_reason="good", note="kept"),
            pairs_record("p3", chosen="one", rejected="two", images=None),
            pairs_record("mathverse_4", category=None),
        ],
    )
    unlabelled = write_jsonl(
        pairs_dir,
        [
            {k: v for k, v in pairs_record("u1").items() if k not in ("chosen", "rejected")}
            | {"response_1": "r one", "response_2": "r two", "model_1": "a", "model_2": "b"}
        ],
        name="unlabelled.jsonl",
    )
    parquet_dir = tmp_path / "parquet"
    parquet_dir.mkdir()
    parquet = vl_rewardbench(parquet_dir)
    mmrb2_dir = tmp_path / "mmrb2"
    mmrb2_dir.mkdir()
    published_fixture(mmrb2_dir)
    release = _release_folder(tmp_path)
    release_zip = _zip(release, tmp_path / "release.zip")

    def run(project, dataset, **options):
        return _summary(import_items_from_paths(project=project, dataset=dataset, **options))

    def mrb_steps(project):
        out = [run(project, mrb, images=mrb_dir, options=ImportOptions(duplicates="suffix"))]
        out.append(run(project, mrb, images=mrb_dir, options=ImportOptions(duplicates="suffix")))
        Item.objects.filter(project=project, external_id="vqa_2").update(live_assignments=1)
        out.append(
            run(project, changed, images=mrb_dir, options=ImportOptions(conflicts="metadata"))
        )
        out.append(
            run(project, seen_changed, images=mrb_dir, options=ImportOptions(conflicts="suffix"))
        )
        return out

    def pairs_steps(project):
        return [
            run(
                project,
                pairs,
                images=pairs_dir,
                gold_from_label=True,
                options=ImportOptions(
                    domain_from="id-prefix", domain_map={"p": "vqa", "mathverse": "reasoning"}
                ),
            ),
            run(project, unlabelled, images=pairs_dir, domain="knowledge"),
        ]

    def parquet_steps(project):
        return [
            run(project, parquet, domain="reasoning"),
            run(project, parquet, domain="reasoning"),
        ]

    def mmrb2_steps(project):
        out = [run(project, mmrb2_dir / f"{task}.json") for task in ("t2i", "edit", "interleaved")]
        out.append(run(project, mmrb2_dir / "reasoning.json", cast_votes=False))
        data = json.loads((mmrb2_dir / "t2i.json").read_text())
        data["pairs"][0]["prompt_metadata"] = {"id": "125"}
        data["pairs"][0]["response_a"]["model_name"] = "imagen5"
        (mmrb2_dir / "t2i.json").write_text(json.dumps(data, indent=2))
        Item.objects.filter(project=project, external_id=data["pairs"][0]["id"]).update(
            live_assignments=1
        )
        out.append(run(project, mmrb2_dir / "t2i.json", update=True))
        out.append(run(project, mmrb2_dir / "t2i.json", update=True))
        return out

    def mmrb2_votes_steps(project):
        return [run(project, mmrb2_dir / "edit.json", cast_votes=True)]

    def release_steps(project):
        return [run(project, release), run(project, release)]

    def release_zip_steps(project):
        return [run(project, release_zip), run(project, release_zip)]

    return [
        ("mrb", mrb_steps),
        ("pairs", pairs_steps),
        ("parquet", parquet_steps),
        ("mmrb2", mmrb2_steps),
        ("mmrb2_votes", mmrb2_votes_steps),
        ("release", release_steps),
        ("release_zip", release_zip_steps),
    ]


def test_every_format_imports_as_the_golden_file_says(tmp_path):
    got = {}
    for name, steps in scenarios(tmp_path):
        project = make_project(slug=f"golden-{name.replace('_', '-')}", seed=5)
        results = steps(project)
        got[name] = {"results": results, **dump(project)}
    got = json.loads(json.dumps(got))
    if os.environ.get("GOLDEN_WRITE"):
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    expected = json.loads(GOLDEN.read_text())
    for name in expected:
        for key in expected[name]:
            assert got[name][key] == expected[name][key], (name, key)
    assert sorted(got) == sorted(expected)
