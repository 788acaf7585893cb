"""PostgreSQL: keep the item row narrow by storing its long text out of line.

Every claim and every vote rewrites an item row (a non-HOT update: the claim
and tally indexes' keys change). With PostgreSQL's default toast_tuple_target
(about 2 kB) the prompt, the responses and their rendered HTML stay in the row,
compressed, so each rewrite copies about 2.7 kB and the table holds three rows
per 8 kB page. At 128 bytes, the smallest target PostgreSQL accepts, long
values move to the TOAST table once and later row versions carry an 18-byte
pointer to them: the row is about 330 bytes, an update copies and logs that
much, and the claim's scan over the index reads fewer heap pages.

New rows follow the setting. Rows already there keep their compressed values
in line until a value is written again (an update that leaves the text as it
is copies it as it is stored), so the migration writes each long text column
again (`x || ''`: the same text, a new value), which sends each row through
the TOAST code under the new target: a few seconds for a table of Multimodal
RewardBench's size.
Other databases have no such setting: nothing to do there.
"""

from django.db import migrations


# The item's columns that hold long text.
TEXT_COLUMNS = (
    "prompt",
    "response_1",
    "response_2",
    "reference_answer",
    "prompt_html",
    "response_1_html",
    "response_2_html",
)


def narrow_rows(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("ALTER TABLE annotate_item SET (toast_tuple_target = 128)")
    schema_editor.execute(
        "UPDATE annotate_item SET "
        + ", ".join(f"{column} = {column} || ''" for column in TEXT_COLUMNS)
    )


def default_rows(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("ALTER TABLE annotate_item RESET (toast_tuple_target)")


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0008_claim_index_with_id"),
    ]

    operations = [migrations.RunPython(narrow_rows, default_rows)]
