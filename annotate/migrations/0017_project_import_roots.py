"""Import roots per project (issue 29). A new project reads no root until a
site admin chooses. Projects that exist now keep reading every root the site
configures today only on a single-team install: every project has the same
active admins (or there is at most one project). On a site with several
teams no project reads any root until a site admin chooses (docs/decisions.md)."""

from django.conf import settings
from django.db import migrations, models


def keep_single_team_roots(apps, schema_editor):
    Project = apps.get_model("annotate", "Project")
    Membership = apps.get_model("annotate", "Membership")
    roots = list(settings.IMPORT_ROOTS)
    if not roots:
        return
    admins: dict[int, set[int]] = {pk: set() for pk in Project.objects.values_list("pk", flat=True)}
    active_admins = Membership.objects.filter(role="admin", is_active=True)
    for project_id, user_id in active_admins.values_list("project_id", "user_id"):
        admins[project_id].add(user_id)
    if len({frozenset(users) for users in admins.values()}) <= 1:
        Project.objects.update(import_roots=roots)


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0016_judgement_flagged_and_item_search"),
    ]

    operations = [
        migrations.AddField(
            model_name="project",
            name="import_roots",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="Server folders (IMPORT_ROOTS entries) this project may import from.",
            ),
        ),
        migrations.RunPython(keep_single_team_roots, migrations.RunPython.noop),
    ]
