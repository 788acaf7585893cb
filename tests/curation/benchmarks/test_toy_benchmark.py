"""The benchmark seam (issue 32 item 3): a toy benchmark, defined and
registered here and nowhere else, is released and scored through the public
paths (the release API and its Celery task, the evaluation API, the
leaderboard page) with no other edit: its file in the release, its manifest
and card sections, its predictions read and scored by its own rules, its own
leaderboard table."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.conf import settings
from django.template import Template
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.models import Domain, Item
from common.storage import read_stored
from curation.benchmarks import registry
from curation.benchmarks.base import Board, EvaluationError, Part, Scored, Upload
from curation.releases import publishing
from tests.curation.releases.test_releases import make_release_project
from tests.factories import make_member

pytestmark = pytest.mark.django_db

TOY_ITEMS = ("vqa_1", "vqa_3", "vqa_4")  # agreed or resolved: released


class ToySection:
    """The toy's words in the card."""

    states_consensus_rule = False
    shows_nominal_alpha = True

    def __init__(self, meta, summary):
        self.section = meta.manifest_extra.get("toy")
        self.holds = bool(self.section)

    def intro(self):
        return "A toy benchmark."

    def phrase(self):
        return f"{self.section['items']} toy items"

    def owns(self, category):
        return category.startswith("toy/")

    def lines(self, *, mixed, others):
        return ["", "## Toy items", "", f"{self.section['items']} items in `toy/items.json`."]

    def files(self, *, parquet, trl):
        return "`toy/items.json` (the toy answers), "

    def absent_lines(self):
        return []

    def loading(self, domains, *, parquet, trl):
        return ["## Loading", "", "Read `toy/items.json`.", ""]


class Toy:
    key = "toy"
    title = "Toy benchmark"
    upload_label = "Toy (TOY lines)"
    upload_help = "Toy: a TOY line, then `<id> <A|B>` lines."
    judge_label = "Toy: its items"
    rekey_prefix = ""
    detect_last = False
    judge_both_orders = False

    def serves(self, domains):
        return any(d.export_category.startswith("toy/") for d in domains)

    def prepare(self, ctx):
        rows = ctx.included.filter(item__domain__export_category__startswith="toy/")
        answers = {
            ext_id: "A" if choice == "1" else "B"
            for ext_id, choice in rows.order_by("item__external_id").values_list(
                "item__external_id", "final_choice"
            )
        }
        (ctx.folder / "toy").mkdir()
        (ctx.folder / "toy" / "items.json").write_text(json.dumps(answers, indent=1))
        return Part(
            key=self.key,
            format_name="toy",
            released={ext_id: ext_id for ext_id in answers},
            written=rows,
            manifest={"items": len(answers)} if answers else {},
        )

    def card(self, meta, summary):
        return ToySection(meta, summary)

    def in_release(self, release):
        return "toy/items.json" in release.manifest.get("files", {})

    def missing_message(self, release):
        return "This release has no toy/items.json."

    def detects(self, head):
        return head.startswith("TOY")

    def _answers(self, release):
        name = f"{release.folder}/toy/items.json"
        return json.loads(read_stored(publishing.release_storage(), name))

    def score(self, release, upload: Upload) -> Scored:
        if upload.swapped or upload.official_compat:
            raise EvaluationError("The toy takes one file and no options.")
        data = upload.predictions
        text = (data if isinstance(data, bytes) else data.read()).decode()
        truth = self._answers(release)
        picks = dict(line.split() for line in text.splitlines()[1:] if line.strip())
        correct = sum(picks.get(ext_id) == side for ext_id, side in truth.items())
        report = {"toy": {"correct": correct, "total": len(truth)}}
        return Scored(
            report=report,
            accuracy=correct / len(truth),
            files={".txt": upload.predictions},
            store_items=lambda evaluation: None,
        )

    def leaderboard(self, release, evaluations, *, sort=""):
        rows = [{"evaluation": e, "toy": e.report["toy"]} for e in evaluations]
        return Board(
            key=self.key,
            title=self.title,
            template=Template(
                '<h2 id="{{ board.key }}">{{ board.title }}</h2>'
                '{% for r in board.rows %}<p class="toy-row">{{ r.evaluation.name }}: '
                "{{ r.toy.correct }}/{{ r.toy.total }}</p>{% endfor %}"
            ),
            columns=["correct"],
            rows=rows,
        )

    def ensure_item_predictions(self, evaluation):
        return 0

    def judge_item_count(self, release):
        return len(self._answers(release))

    def judge_records(self, release):
        return [{"ID": ext_id} for ext_id in self._answers(release)]

    def judge_request(self, record, read_image, endpoint, *, swapped):
        return {"model": endpoint.model, "messages": [{"role": "user", "content": record["ID"]}]}

    def judge_predictions(self, outputs, records, run):
        lines = ["TOY"] + [f"{r['ID']} {outputs.get((r['ID'], 'original'), 'A')}" for r in records]
        return Upload(predictions="\n".join(lines).encode(), filename=f"toy-{run.pk}.txt")


@pytest.fixture
def toy():
    benchmark = Toy()
    registry.register(benchmark)
    yield benchmark
    registry.unregister(benchmark.key)


def api_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def test_a_toy_benchmark_is_released_and_scored_through_the_public_paths(
    tmp_path, toy, client, django_capture_on_commit_callbacks
):
    project = make_release_project(tmp_path, slug="toy")
    domain = Domain.objects.create(
        project=project, slug="toy-task", title="Toy task", export_category="toy/task",
        kind="preference", position=99,
    )  # fmt: skip
    Item.objects.filter(project=project, external_id__in=TOY_ITEMS).update(domain=domain)
    curator = make_member(project, role="curator")
    api = api_client(curator)

    with django_capture_on_commit_callbacks(execute=True):
        r = api.post(f"/api/v1/projects/{project.slug}/releases/", {"version": "t1"}, format="json")
    assert r.status_code == 202, r.content
    release_url = f"/api/v1/projects/{project.slug}/releases/{r.json()['id']}/"
    release = api.get(release_url).json()
    assert release["status"] == "ready", release

    from curation.models import Release

    stored = Release.objects.get(pk=r.json()["id"])
    folder = Path(settings.MEDIA_ROOT) / stored.folder
    answers = json.loads((folder / "toy" / "items.json").read_text())
    assert answers == {"vqa_1": "A", "vqa_3": "B", "vqa_4": "A"}
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["toy"] == {"items": 3}
    assert manifest["formats"] == ["multimodal-rewardbench", "toy"]
    assert "toy/items.json" in manifest["files"]
    card = (folder / "README.md").read_text()
    assert "## Toy items" in card and "`toy/items.json` (the toy answers)" in card
    assert "and 3 toy items." in card  # the opening sentence names both formats
    # The toy items are records too (they have the MRB shape): one member each.
    assert stored.release_items.filter(domain="toy-task").count() == 3

    # Scored through the evaluation API, recognised from the file's shape.
    predictions = b"TOY\nvqa_1 A\nvqa_3 A\nvqa_4 A\n"
    r = api.post(
        release_url + "evaluations/",
        {"name": "toy-judge", "predictions": io.BytesIO(predictions)},
        format="multipart",
    )
    assert r.status_code == 201, r.content
    assert r.json()["scoring"] == "toy"
    assert r.json()["accuracy"] == pytest.approx(2 / 3)

    # Its own table on the leaderboard page, beside the records' table.
    client.force_login(curator)
    page = client.get(reverse("leaderboard", args=[project.slug, stored.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert '<p class="toy-row">toy-judge: 2/3</p>' in html
    assert [b.key for b in page.context["boards"]] == ["mrb", "toy"]


def test_without_the_toy_registered_its_release_has_no_toy_file(tmp_path):
    """The seam works both ways: the same project without the toy registered
    releases only the built-in benchmarks' files."""
    from curation.releases.build import build_release
    from tests.curation.releases.test_releases import new_release

    project = make_release_project(tmp_path, slug="notoy")
    domain = Domain.objects.create(
        project=project, slug="toy-task", title="Toy task", export_category="toy/task",
        kind="preference", position=99,
    )  # fmt: skip
    Item.objects.filter(project=project, external_id__in=TOY_ITEMS).update(domain=domain)
    release = build_release(release_id=new_release(project, domains=["toy-task", "vqa"]).pk)
    assert release.status == "ready", release.error
    folder = Path(settings.MEDIA_ROOT) / release.folder
    assert not (folder / "toy").exists()
    assert "toy" not in release.manifest
