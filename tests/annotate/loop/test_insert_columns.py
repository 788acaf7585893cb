"""The raw INSERTs of annotate.loop.postgres write every field of their model.

Issue 32's PostgreSQL-only trap: with a hand-written column list, a field
added to Assignment with a default kept the SQLite suite green (the ORM
reference writes it) while every claim on PostgreSQL failed. The lists are
now taken from Model._meta.concrete_fields, the values from the model's own
instance; these tests hold that on any database (the statements are only
text here), so a new field is in the statement the moment it is in the
model. tests/annotate/loop/test_statement_paths.py then runs both paths on
PostgreSQL and compares every column they write.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from annotate.loop import orm, postgres
from annotate.models import Assignment, Judgement
from tests.factories import make_member, make_project


def model_columns(model) -> list[str]:
    """Every concrete column of `model` but its key, in the model's order."""
    return [f.column for f in model._meta.concrete_fields if not f.primary_key]


def inserted(sql: str, model) -> list[str]:
    """The column list of `sql`'s INSERT INTO `model`'s table."""
    match = re.search(rf"INSERT INTO {model._meta.db_table} \(([^)]*)\)", sql)
    assert match, sql
    return [c.strip() for c in match.group(1).split(",")]


def test_the_claim_inserts_every_field_of_assignment_but_its_key():
    assert inserted(postgres.CLAIM_SQL, Assignment) == model_columns(Assignment)
    assert [f.column for f in postgres.NEW_ASSIGNMENT_FIELDS] == model_columns(Assignment)


def test_the_claim_returns_every_column_of_the_assignment_it_leases_or_resumes():
    every = ", ".join(f.column for f in Assignment._meta.concrete_fields)
    assert f"RETURNING {every}\n" in postgres.CLAIM_SQL
    assert "SELECT " + ", ".join(f"a.{c}" for c in every.split(", ")) in postgres.CLAIM_SQL


def test_the_vote_inserts_every_field_of_judgement_but_its_key():
    for tally in (("votes_1",), ("votes_tie", "correct_1_yes")):
        assert inserted(postgres._record_vote_sql(tally), Judgement) == model_columns(Judgement)


@pytest.mark.django_db
def test_every_field_the_claim_does_not_set_gets_the_models_default():
    """Each inserted column is the statement's item or a parameter, and each
    parameter is what the ORM's save of orm.new_lease writes: the values the
    claim sets, and the model's default for every other field (a field added
    with a default included)."""
    project = make_project()
    user = make_member(project)
    now = timezone.now()
    lease = now + timedelta(minutes=30)
    parameters = postgres.claim_parameters(
        project=project,
        annotator=user,
        swapped=True,
        now=now,
        lease_expires_at=lease,
        check_stale=False,
    )
    set_by_claim = {
        "annotator_id": user.pk,
        "shown_swapped": True,
        "claimed_at": now,
        "lease_expires_at": lease,
    }
    new = {name: value for name, value in parameters.items() if name.startswith("new_")}
    fields = [f for f in postgres.NEW_ASSIGNMENT_FIELDS if f.attname != "item_id"]
    assert sorted(new) == sorted(f"new_{f.column}" for f in fields)
    for f in fields:
        assert f"%(new_{f.column})s" in postgres.CLAIM_SQL
        expected = set_by_claim.get(f.attname, f.get_default())
        assert new[f"new_{f.column}"] == f.get_db_prep_save(expected, connection), f.name
    # The same instance the ORM path saves.
    assert (
        orm.new_lease(
            item=None, annotator=user, swapped=True, now=now, lease_expires_at=lease
        ).status
        == new["new_status"]
    )
