"""The release writer (curation.releases.exporter), without a database.

`check_release_folder` and `check_release_zip` are a reader written from the
format description (DESIGN §7 and the issue), not from the exporter's code:
the other release tests (pages, e2e) run them on what they build or download.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curation.benchmarks.mrb import records
from curation.benchmarks.mrb.benchmark import BENCHMARK as MRB
from curation.releases import exporter
from curation.releases.exporter import ExportItem, ReleaseMeta

# --- The reader ---------------------------------------------------------------------

RECORD_KEYS = {"ID", "Text", "Image", "Output1", "Output2", "Better", "Category"}
# Domain slug -> the exact Category string of the Multimodal RewardBench format.
CATEGORIES = {
    "general_correctness": "open_generation/correctness_task",
    "general_preference": "open_generation/preference_task",
    "knowledge": "knowledge",
    "reasoning": "reasoning",
    "safety": "safety",
    "vqa": "vqa",
}
SLUG_OF = {category: slug for slug, category in CATEGORIES.items()}
DPO_KEYS = {"prompt", "chosen", "rejected", "images", "id", "category"}


class FormatError(AssertionError):
    pass


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise FormatError(message)


def _is_relative_inside(path: str) -> bool:
    if not path or path.startswith("/") or "\\" in path or "\x00" in path:
        return False
    if len(path) > 1 and path[1] == ":":  # a drive letter
        return False
    return all(part not in ("", ".", "..") for part in path.split("/"))


def _load_json(path: Path):
    _require(path.is_file(), f"{path.name} is missing")
    return json.loads(path.read_text(encoding="utf-8"))


def _load_jsonl(path: Path) -> list[dict]:
    _require(path.is_file(), f"{path} is missing")
    text = path.read_text(encoding="utf-8")
    _require(text == "" or text.endswith("\n"), f"{path.name} does not end with a newline")
    return [json.loads(line) for line in text.splitlines()]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def card_front_matter(root: Path) -> dict:
    """The YAML front matter of the release's README.md."""
    import yaml

    text = (root / "README.md").read_text(encoding="utf-8")
    _require(text.startswith("---\n"), "README.md has no YAML front matter")
    return yaml.safe_load(text[4 : text.index("\n---\n", 4)])


def check_card_configs(root: Path) -> None:
    """`configs:` point at files that exist, one split per domain with
    records: default -> parquet/ (or the per-domain JSON), trl -> trl/."""
    configs = {c["config_name"]: c["data_files"] for c in card_front_matter(root)["configs"]}
    expected = {"default"} | ({"trl"} if (root / "trl").is_dir() else set())
    _require(set(configs) == expected, f"card configs {sorted(configs)}")
    for name, files in configs.items():
        # "train" lists every domain's file (a list); each domain split one file.
        _require(files[0]["split"] == "train", f"{name}: no train split first")
        by_domain = files[1:]
        _require(files[0]["path"] == [e["path"] for e in by_domain], f"{name}: train paths")
        for entry in by_domain:
            _require((root / entry["path"]).is_file(), f"{name}: {entry['path']} is missing")
            _require(entry["split"].replace("_", "a").isalnum(), f"split {entry['split']!r}")
        prefix = {"trl": "trl/"}.get(name, "parquet/" if (root / "parquet").is_dir() else "")
        _require(all(e["path"].startswith(prefix) for e in by_domain), f"{name} paths")


def check_trl_folder(root: Path, records: list[dict]) -> None:
    """trl/<domain>.parquet: one conversational row per record, chosen = the
    Better slot, the record's image embedded."""
    import pyarrow.parquet as pq

    by_id = {r["ID"]: r for r in records}
    seen: set[str] = set()
    for path in sorted((root / "trl").glob("*.parquet")):
        for row in pq.read_table(path).to_pylist():
            record = by_id.get(row["id"])
            _require(record is not None and row["id"] not in seen, f"trl row {row['id']!r}")
            assert record is not None
            seen.add(row["id"])
            other = "Output2" if record["Better"] == "Output1" else "Output1"
            _require(path.stem == SLUG_OF.get(record["Category"], path.stem), f"trl {path.name}")
            _require(row["prompt"] == [{"role": "user", "content": record["Text"]}], "trl prompt")
            want = {"chosen": record[record["Better"]], "rejected": record[other]}
            for key, text in want.items():
                _require(row[key] == [{"role": "assistant", "content": text}], f"trl {key}")
            image = (root / record["Image"]).read_bytes()
            _require(row["images"] == [{"bytes": image, "path": record["Image"]}], "trl images")
            _require(row["category"] == record["Category"], "trl category")
    _require(seen == set(by_id), "trl/ does not hold every record once")


def check_release_folder(root: Path, *, balanced: bool = True) -> list[dict]:
    """Check a release folder against the format description; return the
    records of all_data.json. Raises FormatError (an AssertionError)."""
    records = _load_json(root / "all_data.json")
    _require(isinstance(records, list), "all_data.json is not a JSON array")
    ids: set[str] = set()
    images: set[str] = set()
    for n, record in enumerate(records):
        where = f"all_data.json[{n}]"
        _require(isinstance(record, dict), f"{where} is not an object")
        _require(set(record) == RECORD_KEYS, f"{where} has keys {sorted(record)}")
        for key in RECORD_KEYS:
            _require(isinstance(record[key], str), f"{where}.{key} is not a string")
        _require(record["Better"] in ("Output1", "Output2"), f"{where}.Better={record['Better']}")
        _require(record["Category"] in SLUG_OF, f"{where}.Category={record['Category']!r}")
        _require(record["ID"] not in ids, f"{where}: duplicate ID {record['ID']!r}")
        ids.add(record["ID"])
        image = record["Image"]
        _require(_is_relative_inside(image), f"{where}.Image {image!r} is not a relative path")
        path = root / image
        _require(path.is_file(), f"{where}.Image {image!r} does not exist")
        _require(path.resolve().is_relative_to(root.resolve()), f"{where}.Image leaves the root")
        images.add(image)

    # Every image once: nothing under images/ that no record uses.
    stored = {f for f in _files(root) if f.startswith("images/")}
    _require(stored == images, f"unreferenced images: {sorted(stored - images)}")

    # <domain slug>.json files partition all_data.json.
    by_id = {r["ID"]: r for r in records}
    seen: Counter[str] = Counter()
    domain_files = {slug for slug in CATEGORIES if (root / f"{slug}.json").is_file()}
    for slug in domain_files:
        part = _load_json(root / f"{slug}.json")
        _require(isinstance(part, list), f"{slug}.json is not a JSON array")
        for record in part:
            _require(record.get("ID") in by_id, f"{slug}.json has {record.get('ID')!r}")
            _require(record == by_id[record["ID"]], f"{slug}.json differs on {record['ID']}")
            _require(
                record["Category"] == CATEGORIES[slug],
                f"{record['ID']} ({record['Category']}) is in {slug}.json",
            )
            seen[record["ID"]] += 1
        # DPO pairs of the domain: the same records, chosen = the Better slot.
        dpo = _load_jsonl(root / "dpo" / f"{slug}.jsonl")
        _require(len(dpo) == len(part), f"dpo/{slug}.jsonl has {len(dpo)} lines")
        for line in dpo:
            _require(set(line) == DPO_KEYS, f"dpo/{slug}.jsonl keys {sorted(line)}")
            record = by_id.get(line["id"])
            _require(record is not None and record in part, f"dpo/{slug}: {line['id']!r}")
            assert record is not None
            other = "Output2" if record["Better"] == "Output1" else "Output1"
            # Chat messages, as trl/ and a training mix's dpo/ (issue 31).
            said = {k: line[k][0]["content"] for k in ("prompt", "chosen", "rejected")}
            roles = [line[k][0]["role"] for k in ("prompt", "chosen", "rejected")]
            _require(roles == ["user", "assistant", "assistant"], f"dpo roles of {line['id']}")
            _require(said["chosen"] == record[record["Better"]], f"dpo chosen of {line['id']}")
            _require(said["rejected"] == record[other], f"dpo rejected of {line['id']}")
            _require(said["prompt"] == record["Text"], f"dpo prompt of {line['id']}")
            # Image paths relative to the .jsonl file: ../images/...
            _require(line["images"] == ["../" + record["Image"]], f"dpo images of {line['id']}")
            linked = (root / "dpo" / line["images"][0]).resolve()
            _require(linked == (root / record["Image"]).resolve(), f"dpo image of {line['id']}")
            _require(line["category"] == record["Category"], f"dpo category of {line['id']}")
    _require(
        all(seen[i] == 1 for i in by_id) and set(seen) == set(by_id),
        f"domain files do not partition all_data.json: {dict(seen)}",
    )
    _require({SLUG_OF[r["Category"]] for r in records} <= domain_files, "a domain file is missing")
    extra_json = (
        {f for f in _files(root) if "/" not in f and f.endswith(".json")}
        - {"all_data.json", "manifest.json"}
        - {f"{s}.json" for s in domain_files}
    )
    _require(not extra_json, f"unexpected files {extra_json}")

    if balanced:
        for slug in domain_files:
            better = Counter(r["Better"] for r in records if r["Category"] == CATEGORIES[slug])
            _require(
                abs(better["Output1"] - better["Output2"]) <= 1, f"{slug} unbalanced: {better}"
            )

    # provenance.jsonl: one line per record.
    provenance = _load_jsonl(root / "provenance.jsonl")
    prov_ids = [line.get("ID", line.get("id")) for line in provenance]
    _require(sorted(prov_ids) == sorted(by_id), "provenance.jsonl is not one line per record")
    for line in provenance:
        _require("votes" in line and "provenance" in line, f"provenance keys {sorted(line)}")

    _require((root / "README.md").is_file(), "README.md is missing")
    _require((root / "README.md").stat().st_size > 0, "README.md is empty")
    if records:
        check_card_configs(root)
    if (root / "trl").is_dir():
        check_trl_folder(root, records)

    # manifest.json: sha256 of every (other) file, and they match.
    manifest = _load_json(root / "manifest.json")
    listed = manifest["files"]
    _require(set(listed) == _files(root) - {"manifest.json"}, "manifest files != folder files")
    for name, entry in listed.items():
        digest = entry["sha256"] if isinstance(entry, dict) else entry
        _require(digest == _sha256(root / name), f"sha256 of {name} does not match")
        if isinstance(entry, dict) and "bytes" in entry:
            _require(entry["bytes"] == (root / name).stat().st_size, f"size of {name}")
    _require(manifest.get("total", len(records)) == len(records), "manifest total")
    return records


def check_release_zip(archive: Path, extract_to: Path, *, folder: Path | None = None) -> Path:
    """Check a release zip: safe member names under one root folder, which
    passes check_release_folder (and equals `folder` if given). Returns the
    extracted root."""
    with zipfile.ZipFile(archive) as zf:
        names = [info.filename for info in zf.infolist()]
        _require(len(names) == len(set(names)), "duplicate zip members")
        for name in names:
            _require(_is_relative_inside(name.rstrip("/")), f"unsafe zip member {name!r}")
        roots = {name.split("/", 1)[0] for name in names}
        _require(len(roots) == 1, f"zip has several top-level entries: {roots}")
        zf.extractall(extract_to)
    root = extract_to / roots.pop()
    check_release_folder(root)
    if folder is not None:
        _require(_files(root) == _files(folder), "zip and folder hold different files")
        for name in _files(folder):
            _require((root / name).read_bytes() == (folder / name).read_bytes(), f"{name} differs")
    return root


# --- Building releases in memory --------------------------------------------------------

DOMAINS = [
    ("general_correctness", "General correctness", "open_generation/correctness_task"),
    ("general_preference", "General preference", "open_generation/preference_task"),
    ("knowledge", "Knowledge", "knowledge"),
    ("reasoning", "Reasoning", "reasoning"),
    ("safety", "Safety", "safety"),
    ("vqa", "VQA", "vqa"),
]
POSITION = {slug: n for n, (slug, _, _) in enumerate(DOMAINS)}


def image_bytes(n: int) -> bytes:
    return f"\x89PNG fake image {n}".encode()


_STORE: dict[str, bytes] = {}  # image_source -> bytes


def item(domain: str, ext_id: str, n: int, *, image: int | None = None, **kw) -> ExportItem:
    data = image_bytes(n if image is None else image)
    _STORE[f"store/{hashlib.sha256(data).hexdigest()}"] = data
    fields = dict(
        external_id=ext_id,
        domain=domain,
        category=dict((s, c) for s, _, c in DOMAINS)[domain],
        prompt=f'Question {n}: what is shown? «ü» "quoted"\nline two',
        image_path=f"src/{n if image is None else image}.png",
        image_sha256=hashlib.sha256(data).hexdigest(),
        image_ext="png",
        response_1=f"first answer {n}",
        response_2=f"second answer {n}",
        chosen="1" if n % 3 else "2",
        provenance="unanimous" if n % 2 else "adjudicated",
        reason="" if n % 2 else f"curator reason {n}",
        votes=({"annotator": "ann-a", "choice": "1"}, {"annotator": "ann-b", "choice": "1"}),
        image_source=f"store/{hashlib.sha256(data).hexdigest()}",
    )
    fields.update(kw)
    return ExportItem(**fields)


def sample_items() -> list[ExportItem]:
    items = []
    n = 0
    plan = {
        "general_correctness": ["gc_1", "gc_2", "gc_3"],
        "general_preference": [f"pref_{i}" for i in range(7)],
        "knowledge": ["know_1", "know_2"],
        "reasoning": ["math_1", "coding_2", "geo_math_3", "math_4"],
        "safety": ["pairs_1", "toxic_2", "pairs_3"],
        "vqa": [f"vqa_{i}" for i in range(5)],
    }
    for domain, ids in plan.items():
        for ext_id in ids:
            n += 1
            items.append(item(domain, ext_id, n))
    # two VQA items share one image (same source path and bytes)
    items.append(item("vqa", "vqa_shared", 99, image=n))
    return items


def sort_items(items):
    return sorted(items, key=lambda i: (POSITION[i.domain], i.external_id))


def ids_by_domain(items, domains=None) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {slug: [] for slug in domains or {i.domain for i in items}}
    for i in items:
        out[i.domain].append(i.external_id)
    return out


def meta(seed=7, version="v1.0", domains=None) -> ReleaseMeta:
    return ReleaseMeta(
        project="demo",
        project_name="Demo",
        version=version,
        seed=seed,
        snapshot_at="2024-05-01T12:00:00+00:00",
        licence="CC-BY-4.0",
        domains=[d for d in DOMAINS if domains is None or d[0] in domains],
        agreement={"vqa": {"alpha": "0.812", "ci": "[0.700, 0.900]"}},
        annotation={"votes_per_item": 3},
        card_sections=[MRB],
    )


def store_for(items) -> dict[str, bytes]:
    return {i.image_source: _STORE[i.image_source] for i in items}


def write(folder: Path, items, *, seed=7, version="v1.0", store=None, **kw):
    store = store if store is not None else store_for(items)
    folder.mkdir(parents=True)
    return exporter.write_release(
        folder,
        iter(sort_items(items)),
        meta=meta(seed=seed, version=version),
        shape=records,
        ids_by_domain=kw.pop("ids", None) or ids_by_domain(items),
        copy_image=lambda it, dest: dest.write_bytes(store[it.image_source]),
        **kw,
    )


def all_bytes(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in _files(folder)}


# --- Tests ----------------------------------------------------------------------------


def test_a_release_folder_passes_the_format_reader(tmp_path):
    items = sample_items()
    manifest = write(tmp_path / "rel", items)
    records = check_release_folder(tmp_path / "rel")
    assert len(records) == len(items) == manifest["total"]
    assert {r["ID"] for r in records} == {i.external_id for i in items}
    assert manifest["counts"]["vqa"] == 6
    assert manifest["seed"] == 7 and manifest["release"] == "v1.0"


def test_every_record_puts_the_chosen_response_in_the_better_slot(tmp_path):
    items = sample_items()
    write(tmp_path / "rel", items)
    by_id = {r["ID"]: r for r in check_release_folder(tmp_path / "rel")}
    for i in items:
        record = by_id[i.external_id]
        chosen = i.response_1 if i.chosen == "1" else i.response_2
        rejected = i.response_2 if i.chosen == "1" else i.response_1
        other = "Output2" if record["Better"] == "Output1" else "Output1"
        assert (record[record["Better"]], record[other]) == (chosen, rejected)
        assert (record["Text"], record["Category"]) == (i.prompt, i.category)
        # IDs are written as they are: the scorer's sub-buckets come from prefixes
        assert record["ID"] == i.external_id


def test_records_are_in_a_stable_order_domain_then_id(tmp_path):
    items = sample_items()
    write(tmp_path / "rel", items)
    records = json.loads((tmp_path / "rel" / "all_data.json").read_text())
    keys = [(POSITION[SLUG_OF[r["Category"]]], r["ID"]) for r in records]
    assert keys == sorted(keys)


def test_a_shared_image_is_written_once(tmp_path):
    items = sample_items()
    write(tmp_path / "rel", items)
    records = {r["ID"]: r for r in check_release_folder(tmp_path / "rel")}
    shared = [i for i in items if i.image_path == items[-1].image_path]
    assert len(shared) == 2
    assert len({records[i.external_id]["Image"] for i in shared}) == 1
    assert records["vqa_shared"]["Image"].startswith("images/")


def test_two_different_images_under_one_source_path_both_survive(tmp_path):
    a = item("vqa", "vqa_a", 1)
    b = item("vqa", "vqa_b", 2, image_path=a.image_path)  # same path, other bytes
    store = {a.image_source: image_bytes(1), b.image_source: image_bytes(2)}
    write(tmp_path / "rel", [a, b], store=store)
    records = {r["ID"]: r for r in check_release_folder(tmp_path / "rel")}
    assert records["vqa_a"]["Image"] != records["vqa_b"]["Image"]
    assert (tmp_path / "rel" / records["vqa_a"]["Image"]).read_bytes() == image_bytes(1)
    assert (tmp_path / "rel" / records["vqa_b"]["Image"]).read_bytes() == image_bytes(2)


@pytest.mark.parametrize(
    "source_path",
    ["../../etc/passwd.png", "a/../../x.png", "/abs/x.png", "..\\..\\x.png", "images/y.png"],
)
def test_image_paths_stay_inside_the_release(tmp_path, source_path):
    i = item("vqa", "vqa_1", 1, image_path=source_path)
    write(tmp_path / "rel", [i])
    (record,) = check_release_folder(tmp_path / "rel")
    assert record["Image"].startswith("images/")
    assert (tmp_path / "rel" / record["Image"]).resolve().is_relative_to(tmp_path / "rel")
    assert not (tmp_path / "etc").exists() and not (tmp_path / "x.png").exists()


@given(
    sizes=st.dictionaries(st.sampled_from(list(POSITION)), st.integers(0, 40)), seed=st.integers()
)
@settings(max_examples=60, deadline=None)
def test_slots_are_balanced_within_each_domain(sizes, seed):
    ids = {d: [f"{d}_{n}" for n in range(k)] for d, k in sizes.items()}
    slots = records.slots(ids, seed)
    assert set(slots) == {i for v in ids.values() for i in v}
    for members in ids.values():
        first = sum(slots[i] for i in members)
        assert abs(first - (len(members) - first)) <= 1
    # independent of the order the IDs arrive in
    assert records.slots({d: v[::-1] for d, v in ids.items()}, seed) == slots


def test_same_inputs_give_byte_identical_files_and_zip(tmp_path):
    items = sample_items()
    write(tmp_path / "a" / "demo-v1.0", items)
    write(tmp_path / "b" / "demo-v1.0", list(reversed(items)))  # sorted by the writer's caller
    assert all_bytes(tmp_path / "a" / "demo-v1.0") == all_bytes(tmp_path / "b" / "demo-v1.0")
    # file times must not leak into the archive
    old = 1_000_000_000
    for p in (tmp_path / "b").rglob("*"):
        os.utime(p, (old, old))
    exporter.write_zip(tmp_path / "a" / "demo-v1.0", tmp_path / "a.zip", root="demo-v1.0")
    exporter.write_zip(tmp_path / "b" / "demo-v1.0", tmp_path / "b.zip", root="demo-v1.0")
    assert (tmp_path / "a.zip").read_bytes() == (tmp_path / "b.zip").read_bytes()
    assert exporter.sha256_file(tmp_path / "a.zip") == _sha256(tmp_path / "b.zip")


def test_a_different_seed_moves_slots_but_keeps_the_triplets(tmp_path):
    items = sample_items()
    write(tmp_path / "s7", items, seed=7)
    write(tmp_path / "s8", items, seed=8)
    a = check_release_folder(tmp_path / "s7")
    b = check_release_folder(tmp_path / "s8")

    def triplets(records):
        out = set()
        for r in records:
            other = "Output2" if r["Better"] == "Output1" else "Output1"
            out.add((r["ID"], r["Text"], r["Image"], r[r["Better"]], r[other], r["Category"]))
        return out

    assert triplets(a) == triplets(b)
    assert [r["Better"] for r in a] != [r["Better"] for r in b]


def test_the_zip_holds_exactly_the_folder_under_one_safe_root(tmp_path):
    folder = tmp_path / "demo-v1.0"
    write(folder, sample_items())
    archive = tmp_path / "demo-v1.0.zip"
    exporter.write_zip(folder, archive, root="demo-v1.0")
    root = check_release_zip(archive, tmp_path / "out", folder=folder)
    assert root.name == "demo-v1.0"
    with zipfile.ZipFile(archive) as zf:
        names = zf.namelist()
        assert names == sorted(names)
        assert all(n.startswith("demo-v1.0/") for n in names)
        info = {i.filename: i for i in zf.infolist()}
        assert info["demo-v1.0/all_data.json"].compress_type == zipfile.ZIP_DEFLATED


def test_a_selected_domain_without_items_gets_empty_files(tmp_path):
    items = [i for i in sample_items() if i.domain == "vqa"]
    ids = ids_by_domain(items, domains=["vqa", "safety"])
    manifest = write(tmp_path / "rel", items, ids=ids)
    check_release_folder(tmp_path / "rel")
    assert json.loads((tmp_path / "rel" / "safety.json").read_text()) == []
    assert (tmp_path / "rel" / "dpo" / "safety.jsonl").read_text() == ""
    assert manifest["counts"] == {"safety": 0, "vqa": 6}
    assert not (tmp_path / "rel" / "knowledge.json").exists()


def test_manifest_counts_balance_and_sub_buckets(tmp_path):
    items = sample_items()
    manifest = write(tmp_path / "rel", items)
    records = check_release_folder(tmp_path / "rel")
    for slug, _, category in DOMAINS:
        better = Counter(r["Better"] for r in records if r["Category"] == category)
        assert manifest["balance"][slug] == {
            "Output1": better["Output1"],
            "Output2": better["Output2"],
        }
        assert manifest["counts"][slug] == sum(better.values())
    buckets = manifest["sub_buckets"]
    assert buckets["reasoning/math"] == 2  # math_1, math_4
    assert buckets["reasoning/coding"] == 2  # coding_2 and geo_math_3 (no math prefix)
    assert buckets["safety/bias"] == 2  # pairs_1, pairs_3
    assert buckets["safety/toxicity"] == 1
    readme = (tmp_path / "rel" / "README.md").read_text()
    assert "v1.0" in readme and "CC-BY-4.0" in readme


def test_sub_bucket_follows_the_id_prefix():
    assert records.sub_bucket("reasoning", "Math_12") == "reasoning/math"
    assert records.sub_bucket("reasoning", "geo_math_3") == "reasoning/coding"
    assert records.sub_bucket("safety", "pairs_1") == "safety/bias"
    assert records.sub_bucket("safety", "toxic_pairs") == "safety/toxicity"
    assert records.sub_bucket("vqa", "math_1") == "vqa"


def test_progress_is_reported_once_per_record(tmp_path):
    items = sample_items()
    ticks: list[int] = []
    write(tmp_path / "rel", items, progress=ticks.append)
    assert sum(ticks) == len(items)


# --- The reader is not vacuous: it rejects broken releases -------------------------------


def _broken(tmp_path, change) -> Path:
    folder = tmp_path / "rel"
    write(folder, sample_items())
    change(folder)
    return folder


def _edit_all_data(folder: Path, fn) -> None:
    path = folder / "all_data.json"
    records = json.loads(path.read_text())
    fn(records)
    path.write_text(json.dumps(records))


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda f: _edit_all_data(f, lambda r: r[0].update(Extra="x")), id="extra-key"),
        pytest.param(lambda f: _edit_all_data(f, lambda r: r[0].update(Better="A")), id="better"),
        pytest.param(lambda f: _edit_all_data(f, lambda r: r[0].pop("Category")), id="no-key"),
        pytest.param(lambda f: _edit_all_data(f, lambda r: r.pop()), id="not-partition"),
        pytest.param(lambda f: (f / "vqa.json").write_text("[]"), id="domain-file"),
        pytest.param(lambda f: next((f / "images").rglob("*.png")).unlink(), id="missing-image"),
        pytest.param(lambda f: (f / "README.md").write_text("changed"), id="checksum"),
        pytest.param(lambda f: (f / "stray.txt").write_text("x"), id="unlisted-file"),
        pytest.param(
            lambda f: (f / "provenance.jsonl").write_text(
                "".join((f / "provenance.jsonl").read_text().splitlines(True)[1:])
            ),
            id="provenance",
        ),
    ],
)
def test_the_reader_rejects_broken_releases(tmp_path, change):
    folder = _broken(tmp_path, change)
    with pytest.raises((FormatError, KeyError, json.JSONDecodeError)):
        check_release_folder(folder)


@pytest.mark.parametrize("bad", ["/abs/file.json", "demo/../evil.json", "../evil.json"])
def test_the_zip_reader_rejects_unsafe_members(tmp_path, bad):
    folder = tmp_path / "demo-v1.0"
    write(folder, sample_items())
    archive = tmp_path / "bad.zip"
    exporter.write_zip(folder, archive, root="demo-v1.0")
    with zipfile.ZipFile(archive, "a") as zf:
        zf.writestr(zipfile.ZipInfo(bad), b"{}")
    with pytest.raises(FormatError):
        check_release_zip(archive, tmp_path / "out")
    assert not (tmp_path / "evil.json").exists()


def test_copy_file_copies_the_bytes_as_they_are(tmp_path):
    src = tmp_path / "src.png"
    src.write_bytes(image_bytes(5) * 100_000)
    dest = tmp_path / "dest.png"
    exporter.copy_file(src, dest)
    assert dest.read_bytes() == src.read_bytes()


@pytest.mark.parametrize(
    "first,second", [("a/b.png", "a/b.png/c.png"), ("a/b.png/c.png", "a/b.png")]
)
def test_an_image_path_that_is_a_folder_of_another_still_gives_a_valid_release(
    tmp_path, first, second
):
    items = [item("vqa", "vqa_a", 1, image_path=first), item("vqa", "vqa_b", 2, image_path=second)]
    write(tmp_path / "rel", items)
    check_release_folder(tmp_path / "rel")
