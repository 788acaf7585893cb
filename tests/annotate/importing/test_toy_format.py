"""A new input format is one module (issue 32 item 3): a toy format, defined
and registered here only, imports through the public upload API and the
upload page with every record-level option, and no other edit."""

from __future__ import annotations

import hashlib
import json
from types import SimpleNamespace

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.importing import formats
from annotate.importing.formats import TEXT, ParsedFile, ParsedItem, ParsedPart
from annotate.importing.records import ImportFailed, ImportProblem, ProblemLog
from annotate.models import Item, ItemPart
from tests.factories import make_member, make_project

pytestmark = pytest.mark.django_db


def _toy_read(source, context):
    """A `.toy` file: one item a line, `id | domain | prompt | response | response`."""
    path = source.path
    log = ProblemLog(path.name, context.bounds.max_errors, context.options.wording)
    for n, line in enumerate(path.read_text().splitlines(), start=1):
        if line.count("|") != 4:
            log.add("must have five fields separated by |", line=n, index=n - 1)
    log.raise_if_any()

    def items():
        for n, line in enumerate(path.read_text().splitlines(), start=1):
            ext_id, domain, prompt, first, second = (f.strip() for f in line.split("|"))
            yield ParsedItem(
                line=n,
                index=n - 1,
                external_id=ext_id,
                domain=context.known.get(domain, domain),
                prompt=[ParsedPart(TEXT, text=prompt)],
                responses=[[ParsedPart(TEXT, text=first)], [ParsedPart(TEXT, text=second)]],
                meta={"toy": True},
            )

    def fingerprint(item):
        payload = [item.external_id, item.domain, [p.text for p in item.prompt]]
        payload += [[p.text for p in slot] for slot in item.responses]
        return hashlib.sha256(json.dumps(payload).encode()).hexdigest()

    listed = list(items())
    unknown = sorted({i.domain for i in listed if i.domain not in context.known.values()})
    if unknown:
        raise ImportFailed([ImportProblem(path.name, f"unknown domains {unknown}")])
    return ParsedFile(
        format="toy",
        filename=path.name,
        items=items,
        count=len(listed),
        ids=[i.external_id for i in listed],
        images={},
        image_source=context.images,
        fingerprint=fingerprint,
    )


TOY = SimpleNamespace(
    NAMES=("toy",),
    SUFFIXES=(".toy",),
    detect=lambda source: source.name.endswith(".toy"),
    read=_toy_read,
)


@pytest.fixture
def toy():
    formats.register(TOY)
    yield TOY
    formats.unregister(TOY)


LINES = "toy_1 | vqa | What? | One. | Two.\ntoy_2 | knowledge | Why? | Because. | No.\n"


def api_client(project):
    client = APIClient()
    user = make_member(project, role="admin")
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def post(client, project, text, **fields):
    return client.post(
        f"/api/v1/projects/{project.slug}/imports/",
        {"dataset": SimpleUploadedFile("set.toy", text.encode()), **fields},
        format="multipart",
    )


def test_a_registered_toy_format_imports_through_the_api(toy):
    project = make_project(slug="toy")
    client = api_client(project)
    response = post(client, project, LINES)
    assert response.status_code == 200, response.content
    assert response.json()["created"] == 2
    item = Item.objects.get(external_id="toy_2")
    assert (item.domain.slug, item.prompt, item.response_1, item.meta) == (
        "knowledge",
        "Why?",
        "Because.",
        {"toy": True},
    )
    parts = list(
        ItemPart.objects.filter(item=item).order_by("slot", "position").values_list("slot", "text")
    )
    assert parts == [("prompt", "Why?"), ("response_1", "Because."), ("response_2", "No.")]
    # The same file again: a no-op.
    again = post(client, project, LINES)
    assert again.json()["created"] == 0 and again.json()["unchanged"] == 2


def test_record_level_options_work_for_the_toy_format(toy):
    project = make_project(slug="toy")
    client = api_client(project)
    assert post(client, project, LINES).status_code == 200
    changed = LINES.replace("Because.", "Since.")
    refused = post(client, project, changed)
    assert refused.status_code == 400
    [problem] = refused.json()["error"]["problems"]
    assert "response_1 differs on 1 record (first: 1)" in problem["message"]
    assert "conflicts=suffix" in problem["message"]
    suffixed = post(client, project, changed, conflicts="suffix")
    assert suffixed.status_code == 200, suffixed.content
    assert Item.objects.get(external_id="toy_2#2").meta == {"toy": True, "original_id": "toy_2"}
    # An item annotators claimed: what they saw may not change, even with replace.
    Item.objects.filter(external_id="toy_1").update(live_assignments=1)
    seen = post(client, project, LINES.replace("One.", "Uno."), conflicts="replace")
    assert seen.status_code == 400
    assert "cannot be replaced" in seen.json()["error"]["problems"][0]["message"]
    assert Item.objects.get(external_id="toy_1").response_1 == "One."
    # A fixed domain for the whole file is an option of every format.
    other = make_project(slug="toy-two")
    response = post(api_client(other), other, "x | vqa | P | A | B\n", domain="reasoning")
    assert response.status_code == 200, response.content


def test_the_upload_page_takes_the_toy_format_in_constant_queries(client, toy):
    project = make_project(slug="toy")
    admin = make_member(project, role="admin")
    client.force_login(admin)

    def upload(text):
        with CaptureQueriesContext(connection) as queries:
            response = client.post(
                reverse("import", args=[project.slug]),
                {"dataset": SimpleUploadedFile("set.toy", text.encode()), "conflicts": "refuse"},
            )
        assert response.status_code in (200, 302), response.content[:300]
        return len(queries)

    small = upload("a | vqa | P | A | B\n")
    # 20 rows: within one batch of SQLite's 999 parameters at the item's ~35
    # columns (more rows are more batches, by design of bulk_create).
    large = upload("".join(f"b{n} | vqa | P{n} | A | B\n" for n in range(20)))
    assert Item.objects.filter(project=project).count() == 21
    assert large == small  # rows go in batches: the statements do not grow with the file
