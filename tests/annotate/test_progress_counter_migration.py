"""Migration 0019 sums the items that exist when it runs into the progress
counters, installs the triggers that keep them (an item written after it
moves them), and unwinds: back at 0018 an item write touches no counter."""

import pytest
from django.db import connection

from tests.migrations import migrate, migrated_to

BEFORE = [("annotate", "0021_item_content_is_parts")]
AFTER = [("annotate", "0022_progresscounter")]


def _sums(apps, project_id) -> tuple[int, int, int]:
    rows = apps.get_model("annotate", "ProgressCounter").objects.filter(project_id=project_id)
    return (
        sum(r.needed for r in rows),
        sum(r.collected for r in rows),
        sum(r.unfilled for r in rows),
    )


@pytest.mark.django_db(transaction=True)
def test_migration_sums_existing_items_and_keeps_them_after():
    with migrated_to(BEFORE) as apps:
        Project = apps.get_model("annotate", "Project")
        Domain = apps.get_model("annotate", "Domain")
        Item = apps.get_model("annotate", "Item")
        projects = {}
        # (votes_needed, live_assignments, votes_1, votes_2, votes_tie) per item
        shapes = {
            "p": [(3, 3, 2, 1, 0), (3, 1, 1, 0, 0), (1, 1, 1, 1, 1), (2, 0, 0, 0, 0)],
            "q": [(5, 2, 0, 0, 2)],
        }
        for slug, items in shapes.items():
            project = projects[slug] = Project.objects.create(slug=slug, name=slug)
            domain = Domain.objects.create(
                project=project, slug="d", title="D", export_category="d", kind="preference"
            )
            for n, (needed, live, v1, v2, tie) in enumerate(items):
                Item.objects.create(
                    project=project,
                    domain=domain,
                    external_id=f"{slug}{n}",
                    prompt="?",
                    response_1="a",
                    response_2="b",
                    content_hash=f"{slug}{n}",
                    votes_needed=needed,
                    live_assignments=live,
                    votes_1=v1,
                    votes_2=v2,
                    votes_tie=tie,
                )

        apps = migrate(AFTER)
        # needed; min(votes, needed); items with live < needed
        assert _sums(apps, projects["p"].pk) == (9, 3 + 1 + 1 + 0, 2)
        assert _sums(apps, projects["q"].pk) == (5, 2, 1)
        Item = apps.get_model("annotate", "Item")
        Item.objects.filter(external_id="p3").update(live_assignments=2, votes_1=2)
        assert _sums(apps, projects["p"].pk) == (9, 7, 1)

        migrate(BEFORE)
        with connection.cursor() as cursor:
            names = {t.name for t in connection.introspection.get_table_list(cursor)}
        assert "annotate_progresscounter" not in names
        # No trigger left to write into a table that is gone.
        Item = apps.get_model("annotate", "Item")
        Item.objects.filter(external_id="p1").update(votes_2=1)
