"""`manage.py seed_demo`: a demo project with 120 items, two generation demo
projects (Multimodal RewardBench 2-style pictures and interleaved answers,
graded votes: the `seed_demo` of the import formats that have one) and five
demo accounts.

Runs at every `make run`, so it is idempotent and quick: when the demo project
already has its items nothing is generated, and users, memberships and items
that exist are left as they are.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotate.importing import formats
from annotate.importing.formats import DemoSeeded
from annotate.importing.records import ImportFailed
from annotate.importing.service import import_items_from_paths
from annotate.models import MULTIMODAL_REWARDBENCH_DOMAINS, Item, Membership, Project, Role
from demo import (
    DEMO_SEED,
    DOMAIN_GUIDELINES,
    ITEMS_PER_DOMAIN,
    PROJECT_DESCRIPTION,
    PROJECT_GUIDELINES,
    PROJECT_NAME,
    DemoItem,
    build_demo_items,
    write_mrb_dataset,
)

DEMO_SLUG = "demo"
DEMO_PASSWORD = "demo-pass-2026"
DEMO_URL = "http://127.0.0.1:8000/"  # without --url (make demo passes its HOST and PORT)
# username, role in the demo project, pseudonym
DEMO_ACCOUNTS = (
    ("annotator1", Role.ANNOTATOR, "A1"),
    ("annotator2", Role.ANNOTATOR, "A2"),
    ("annotator3", Role.ANNOTATOR, "A3"),
    ("curator", Role.CURATOR, "C1"),
    ("admin", Role.ADMIN, "M1"),
)
DEMO_ITEM_COUNT = ITEMS_PER_DOMAIN * len(MULTIMODAL_REWARDBENCH_DOMAINS)


class Command(BaseCommand):
    help = (
        f"Create the demo project '{DEMO_SLUG}' ({DEMO_ITEM_COUNT} generated items in six "
        "domains), the generation demo projects 'demo-t2i' and 'demo-interleaved' (Multimodal "
        "RewardBench 2-style pictures, graded votes) and demo accounts with the password "
        f"'{DEMO_PASSWORD}'. Idempotent."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--url",
            default=DEMO_URL,
            help=f"The address the app is served at, printed for signing in (default {DEMO_URL}).",
        )

    def handle(self, *args, **opts):
        self.url = opts["url"]
        if settings.PRODUCTION:
            # Its accounts' password is printed and published in the README.
            raise CommandError(
                "seed_demo creates accounts with a published password and does not run "
                "with DJANGO_ENV=production"
            )
        project = Project.objects.filter(slug=DEMO_SLUG).first()
        have = project.items.count() if project else 0
        # Generate (CPU only, ~1 s) before any transaction so the write lock is short.
        items = build_demo_items(DEMO_SEED) if have < DEMO_ITEM_COUNT else []
        users = ensure_demo_users()
        with tempfile.TemporaryDirectory(prefix="seed-demo-") as tmp, transaction.atomic():
            project = ensure_demo_project(created_by=users["admin"])
            ensure_memberships(project, users)
            created = import_demo_items(project, items, Path(tmp)) if items else 0
        seeded = [DemoSeeded(project, created, 0)]
        for fmt in formats.FORMATS:  # the formats' own demo projects
            if hasattr(fmt, "seed_demo"):
                with tempfile.TemporaryDirectory(prefix="seed-demo-") as tmp:
                    seeded += fmt.seed_demo(users, Path(tmp), ensure_memberships)
        self.report(seeded)

    def report(self, seeded: list[DemoSeeded]) -> None:
        for done in seeded:
            project = done.project
            total, domains = project.items.count(), project.domains.count()
            news = f"{done.created} created" if done.created else "nothing new"
            if done.votes:
                news += f", {done.votes} demo votes"
            self.stdout.write(
                self.style.SUCCESS(
                    f"Demo project '{project.name}' (/p/{project.slug}/): {total} items in "
                    f"{domains} domain{'s' if domains != 1 else ''} ({news})."
                )
            )
        rows = [("username", "password", "role")] + [
            (username, DEMO_PASSWORD, f"{role.label.lower()} ({pseudonym})")
            for username, role, pseudonym in DEMO_ACCOUNTS
        ]
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        self.stdout.write(f"\nOpen {self.url} and sign in as one of:\n")
        for n, row in enumerate(rows):
            line = "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
            self.stdout.write(f"  {line}".rstrip())
            if n == 0:
                self.stdout.write("  " + "  ".join("-" * w for w in widths))
        self.stdout.write(
            "\n(Accounts that existed before keep their own password; admin is a superuser.)"
        )


def ensure_demo_users() -> dict:
    """The demo accounts by username, creating those that are missing."""
    User = get_user_model()
    names = [username for username, _, _ in DEMO_ACCOUNTS]
    existing = set(User.objects.filter(username__in=names).values_list("username", flat=True))
    new = [
        User(username=name, is_staff=name == "admin", is_superuser=name == "admin")
        for name in names
        if name not in existing
    ]
    if new:
        # One PBKDF2 hash costs ~0.4 s, five would dominate the first `make run`.
        # The password is public (the command prints it), so one salted hash
        # shared by the demo accounts gives nothing away.
        new[0].set_password(DEMO_PASSWORD)
        for user in new[1:]:
            user.password = new[0].password
        # ignore_conflicts: a concurrent run may have created the same names.
        User.objects.bulk_create(new, ignore_conflicts=True)
    return {user.username: user for user in User.objects.filter(username__in=names)}


def ensure_demo_project(*, created_by) -> Project:
    project, _ = Project.objects.get_or_create(
        slug=DEMO_SLUG,
        defaults={
            "name": PROJECT_NAME,
            "description": PROJECT_DESCRIPTION,
            "guidelines": PROJECT_GUIDELINES,
            "licence": "CC0-1.0 (synthetic demo data)",
            "seed": DEMO_SEED,
            "created_by": created_by,
        },
    )
    project.create_default_domains()
    for slug, text in DOMAIN_GUIDELINES.items():
        project.domains.filter(slug=slug, guidelines="").update(guidelines=text)
    return project


def ensure_memberships(project: Project, users: dict) -> None:
    for username, role, pseudonym in DEMO_ACCOUNTS:
        Membership.objects.get_or_create(
            project=project,
            user=users[username],
            defaults={"role": role, "pseudonym": pseudonym},
        )


def import_demo_items(project: Project, items: list[DemoItem], folder: Path) -> int:
    """Write the items as a Multimodal RewardBench file and import it through
    the real importer (a no-op for items already there), then give them model
    names and gold answers, which that format has no field for."""
    categories = dict(project.domains.values_list("slug", "export_category"))
    dataset = write_mrb_dataset(items, folder, categories)
    try:
        result = import_items_from_paths(project=project, dataset=dataset, images=folder)
    except ImportFailed as exc:
        raise CommandError(
            f"the demo items could not be imported (was the demo project changed?):\n{exc}"
        ) from None
    by_id = {item.external_id: item for item in items}
    changed = []
    for row in project.items.filter(external_id__in=list(by_id)).only(
        "pk", "external_id", "model_1", "model_2", "gold_choice"
    ):
        demo = by_id[row.external_id]
        before = (row.model_1, row.model_2, row.gold_choice)
        # Only empty fields: never overwrite what a person set.
        row.model_1 = row.model_1 or demo.model_1
        row.model_2 = row.model_2 or demo.model_2
        if demo.gold and not row.gold_choice:
            row.gold_choice = demo.better
        if (row.model_1, row.model_2, row.gold_choice) != before:
            changed.append(row)
    Item.objects.bulk_update(changed, ["model_1", "model_2", "gold_choice"], batch_size=500)
    return result.created
