"""The admin shows a judgement's per-slot answers (issue 32), read-only."""

import pytest
from django.urls import reverse

from tests.factories import make_assignment, make_item, make_judgement, make_user

pytestmark = pytest.mark.django_db


def test_a_judgements_admin_page_lists_its_slot_answers_without_a_way_to_edit(client):
    judgement = make_judgement(make_assignment(make_item()), correct_1="yes", grade_2="B")
    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    response = client.get(reverse("admin:annotate_judgement_change", args=[judgement.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Correct" in html and ">B<" in html.replace("\n", "").replace(" ", "")
    assert 'name="slots-0-correctness"' not in html
