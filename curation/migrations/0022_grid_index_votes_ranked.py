"""The data grid's item index (0019) carries votes_ranked too: the grid's
vote count filter and sort read every item's votes (annotate 0026's
N-slot count beside the pair's tallies), and stay an index-only scan.
PostgreSQL only, as 0019."""

from django.db import migrations

ITEM_GRID_INDEX = "annotate_item_grid_idx"
_CREATE = (
    f"CREATE INDEX {ITEM_GRID_INDEX} ON annotate_item (project_id, domain_id, id) "
    "INCLUDE ({})"
)


def _rebuild(schema_editor, included: str) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"DROP INDEX IF EXISTS {ITEM_GRID_INDEX}")
    schema_editor.execute(_CREATE.format(included))


def forward(apps, schema_editor):
    _rebuild(schema_editor, "votes_1, votes_2, votes_tie, votes_ranked, gold_choice")


def backward(apps, schema_editor):
    _rebuild(schema_editor, "votes_1, votes_2, votes_tie, gold_choice")


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0026_item_votes_ranked"),
        ("curation", "0021_verdict_final_ranks"),
    ]

    operations = [migrations.RunPython(forward, backward)]
