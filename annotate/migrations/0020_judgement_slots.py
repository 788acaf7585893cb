"""Issue 32: a judgement stores its answer in canonical slot terms, by task
(`task`: pairwise, best of N, ranking; `choice` 1/2/tie, the slot picked or
"none", or "" for a ranking), and its per-slot answers (correctness, grade,
rank) in JudgementSlot rows instead of the pair's correct_1/correct_2/
grade_1/grade_2 columns. A row only for a slot that got an answer.

Forward and backward: each pair vote's labels and grades move to slot rows
and back to the columns, unchanged. Going back refuses (changing nothing)
while any vote is not a pair's (best of N, rankings, ranks, slots past 2).
"""

import django.db.models.deletion
from django.db import migrations, models

PAIR = (1, 2)


def _checks_now(schema_editor):
    """PostgreSQL: check the foreign keys of the rows written here at once, so
    that no trigger event is left pending when the table is altered next in
    the same transaction ("cannot ALTER TABLE ... pending trigger events")."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def slots_from_columns(apps, schema_editor):
    _checks_now(schema_editor)
    Judgement = apps.get_model("annotate", "Judgement")
    JudgementSlot = apps.get_model("annotate", "JudgementSlot")
    rows = (
        Judgement.objects.exclude(correct_1="", correct_2="", grade_1="", grade_2="")
        .values_list("pk", "correct_1", "correct_2", "grade_1", "grade_2")
        .order_by("pk")
    )
    batch = []
    for pk, c1, c2, g1, g2 in rows.iterator(chunk_size=5000):
        for slot, correctness, grade in ((1, c1, g1), (2, c2, g2)):
            if correctness or grade:
                batch.append(
                    JudgementSlot(judgement_id=pk, slot=slot, correctness=correctness, grade=grade)
                )
        if len(batch) >= 5000:
            JudgementSlot.objects.bulk_create(batch)
            batch = []
    JudgementSlot.objects.bulk_create(batch)


def columns_from_slots(apps, schema_editor):
    _checks_now(schema_editor)
    JudgementSlot = apps.get_model("annotate", "JudgementSlot")
    Judgement = apps.get_model("annotate", "Judgement")
    rows = JudgementSlot.objects.values_list("judgement_id", "slot", "correctness", "grade")
    for judgement_id, slot, correctness, grade in rows.order_by("pk").iterator(chunk_size=5000):
        Judgement.objects.filter(pk=judgement_id).update(
            **{f"correct_{slot}": correctness, f"grade_{slot}": grade}
        )


def refuse_what_pairs_cannot_hold(apps, schema_editor):
    Judgement = apps.get_model("annotate", "Judgement")
    JudgementSlot = apps.get_model("annotate", "JudgementSlot")
    if (
        Judgement.objects.exclude(task="pairwise").exists()
        or JudgementSlot.objects.exclude(slot__in=PAIR).exists()
        or JudgementSlot.objects.filter(rank__isnull=False).exists()
    ):
        raise RuntimeError(
            "Votes that are not a pair's (best of N, rankings, ranks, slots past 2) cannot go "
            "back to the pair's columns (correct_1/2, grade_1/2)."
        )


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0019_assignment_display_order"),
    ]

    operations = [
        migrations.CreateModel(
            name="JudgementSlot",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("slot", models.PositiveSmallIntegerField()),
                (
                    "correctness",
                    models.CharField(
                        blank=True,
                        choices=[
                            ("", "Not asked"),
                            ("yes", "Correct"),
                            ("no", "Incorrect"),
                            ("unsure", "Unsure"),
                        ],
                        default="",
                        max_length=6,
                    ),
                ),
                (
                    "grade",
                    models.CharField(
                        blank=True,
                        choices=[("", "Not asked"), ("A", "A"), ("B", "B"), ("C", "C")],
                        default="",
                        max_length=1,
                    ),
                ),
                ("rank", models.PositiveSmallIntegerField(blank=True, null=True)),
            ],
        ),
        migrations.AddField(
            model_name="judgementslot",
            name="judgement",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="slots",
                to="annotate.judgement",
            ),
        ),
        migrations.AddConstraint(
            model_name="judgementslot",
            constraint=models.UniqueConstraint(
                fields=("judgement", "slot"), name="annotate_judgementslot_one_per_slot"
            ),
        ),
        migrations.AddConstraint(
            model_name="judgementslot",
            constraint=models.CheckConstraint(
                condition=models.Q(("slot__gte", 1), ("slot__lte", 9)),
                name="annotate_judgementslot_slot_range",
            ),
        ),
        migrations.AddConstraint(
            model_name="judgementslot",
            constraint=models.CheckConstraint(
                condition=models.Q(("correctness__in", ["", "yes", "no", "unsure"])),
                name="annotate_judgementslot_correctness_valid",
            ),
        ),
        migrations.AddConstraint(
            model_name="judgementslot",
            constraint=models.CheckConstraint(
                condition=models.Q(("grade__in", ["", "A", "B", "C"])),
                name="annotate_judgementslot_grade_valid",
            ),
        ),
        migrations.AddConstraint(
            model_name="judgementslot",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("rank__isnull", True),
                    models.Q(("rank__gte", 1), ("rank__lte", 9)),
                    _connector="OR",
                ),
                name="annotate_judgementslot_rank_range",
            ),
        ),
        migrations.AddConstraint(
            model_name="judgementslot",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("correctness", ""), ("grade", ""), ("rank__isnull", True), _negated=True
                ),
                name="annotate_judgementslot_answers_something",
            ),
        ),
        migrations.AddField(
            model_name="judgement",
            name="task",
            field=models.CharField(
                choices=[
                    ("pairwise", "Pairwise"),
                    ("best_of_n", "Best of N"),
                    ("ranking", "Ranking"),
                ],
                default="pairwise",
                max_length=9,
            ),
        ),
        migrations.RunPython(slots_from_columns, columns_from_slots),
        migrations.RemoveConstraint(
            model_name="judgement",
            name="annotate_judgement_choice_valid",
        ),
        migrations.RemoveConstraint(
            model_name="judgement",
            name="annotate_judgement_correctness_valid",
        ),
        migrations.RemoveConstraint(
            model_name="judgement",
            name="annotate_judgement_strength_matches_choice",
        ),
        migrations.RemoveConstraint(
            model_name="judgement",
            name="annotate_judgement_grade_valid",
        ),
        migrations.RemoveField(
            model_name="judgement",
            name="correct_1",
        ),
        migrations.RemoveField(
            model_name="judgement",
            name="correct_2",
        ),
        migrations.RemoveField(
            model_name="judgement",
            name="grade_1",
        ),
        migrations.RemoveField(
            model_name="judgement",
            name="grade_2",
        ),
        migrations.AlterField(
            model_name="judgement",
            name="choice",
            field=models.CharField(max_length=4),
        ),
        migrations.AddConstraint(
            model_name="judgement",
            constraint=models.CheckConstraint(
                condition=models.Q(("task__in", ["pairwise", "best_of_n", "ranking"])),
                name="annotate_judgement_task_valid",
            ),
        ),
        migrations.AddConstraint(
            model_name="judgement",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("choice__in", ["1", "2", "tie"]), ("task", "pairwise")),
                    models.Q(
                        ("choice__in", ("1", "2", "3", "4", "5", "6", "7", "8", "9", "none")),
                        ("task", "best_of_n"),
                    ),
                    models.Q(("choice", ""), ("task", "ranking")),
                    models.Q(("task__in", ["pairwise", "best_of_n", "ranking"]), _negated=True),
                    _connector="OR",
                ),
                name="annotate_judgement_choice_valid",
            ),
        ),
        migrations.AddConstraint(
            model_name="judgement",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("strength__isnull", True),
                    models.Q(
                        ("choice", "1"),
                        ("strength__gte", 1),
                        ("strength__lte", 3),
                        ("task", "pairwise"),
                    ),
                    models.Q(
                        ("choice", "2"),
                        ("strength__gte", -3),
                        ("strength__lte", -1),
                        ("task", "pairwise"),
                    ),
                    models.Q(("choice", "tie"), ("strength", 0), ("task", "pairwise")),
                    _connector="OR",
                ),
                name="annotate_judgement_strength_matches_choice",
            ),
        ),
        # Going back, this runs first: nothing changes when it refuses.
        migrations.RunPython(migrations.RunPython.noop, refuse_what_pairs_cannot_hold),
    ]
