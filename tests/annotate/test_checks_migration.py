"""Migration 0033 (issue 36 item 2) takes existing qualification and check
items out of the vote pool: votes_needed and live_assignments 0, the
progress counters moved by exactly their shares (the triggers, made again
after SQLite's table rebuild, still count), benchmark items untouched."""

import pytest

from tests.migrations import migrate, migrated_to

BEFORE = [("annotate", "0032_qualification")]
AFTER = [("annotate", "0033_checks")]


def _sums(apps, project_id) -> tuple[int, int, int]:
    rows = apps.get_model("annotate", "ProgressCounter").objects.filter(project_id=project_id)
    return (
        sum(r.needed for r in rows),
        sum(r.collected for r in rows),
        sum(r.unfilled for r in rows),
    )


@pytest.mark.django_db(transaction=True)
def test_gate_items_leave_the_pool_and_the_counters():
    with migrated_to(BEFORE) as apps:
        Project = apps.get_model("annotate", "Project")
        Domain = apps.get_model("annotate", "Domain")
        Item = apps.get_model("annotate", "Item")
        project = Project.objects.create(slug="p", name="p")
        domain = Domain.objects.create(
            project=project, slug="d", title="D", export_category="d", kind="preference"
        )
        # (purpose, votes_needed, live_assignments, votes_1)
        for n, (purpose, needed, live, v1) in enumerate(
            [("benchmark", 3, 1, 1), ("check", 3, 2, 2), ("qualification", 2, 0, 0)]
        ):
            Item.objects.create(
                project=project,
                domain=domain,
                external_id=f"i{n}",
                prompt="?",
                response_1="a",
                response_2="b",
                content_hash=f"i{n}",
                purpose=purpose,
                gold_choice="" if purpose == "benchmark" else "1",
                votes_needed=needed,
                live_assignments=live,
                votes_1=v1,
            )
        assert _sums(apps, project.pk) == (8, 3, 3)

        apps = migrate(AFTER)
        assert _sums(apps, project.pk) == (3, 1, 1)  # the benchmark item's alone
        Item = apps.get_model("annotate", "Item")
        rows = dict(Item.objects.values_list("purpose", "votes_needed"))
        assert rows == {"benchmark": 3, "check": 0, "qualification": 0}
        # The triggers count after the rebuild: a vote moves the counters.
        Item.objects.filter(purpose="benchmark").update(votes_1=3)
        assert _sums(apps, project.pk) == (3, 3, 1)
