"""Setting a benchmark up without Django admin: projects and their domains.
Every change is audited (SetupEvent); members and invitations are in
annotate.setup.team, bulk users in annotate.setup.site_users.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify

from annotate import signals
from annotate.loop.leases import release_open_leases
from annotate.models import (
    DOMAIN_WORDING,
    Assignment,
    AssignmentStatus,
    Domain,
    DomainKind,
    Judgement,
    Membership,
    PreferenceScale,
    Project,
    Role,
    Task,
)
from annotate.setup.models import SetupEvent
from annotate.setup.presets import PRESETS


class SetupError(Exception):
    """A change the rules refuse; the message says why (shown to the user).
    `field` names the input it is about, where there is one."""

    def __init__(self, message: str, *, field: str | None = None):
        self.field = field
        super().__init__(message)


CREATE_PROJECTS_PERMISSION = "annotate.add_project"

# Project fields an admin may change (settings page and API), with the
# database's own limits checked again by its constraints. The vote count and
# the agreement thresholds change on curation's rule page, which re-evaluates
# the verdicts (curation.verdicts.service.update_thresholds).
PROJECT_FIELDS = (
    "name",
    "description",
    "guidelines",
    "licence",
    "preference_scale",
    "allow_tie",
    "allow_none_pick",
    "require_rationale",
    "lease_minutes",
    # Ongoing checks (issue 36, annotate.checks).
    "check_rate",
    "check_threshold",
    "check_minimum",
    "seed",
    "qualification_required",
    "qualification_pass_mark",
    "qualification_retry_hours",
)
DOMAIN_FIELDS = (
    "slug",
    "title",
    "export_category",
    "kind",
    "guidelines",
    "correctness_question",
    "yes_label",
    "no_label",
    "asks_grade",
    "grade_question",
)
# The correctness and grade wording's fields: left empty, they take the
# model's default ("Is {response} correct?", "Correct", "Incorrect", "Grade
# of response {response}").
WORDING_FIELDS = ("correctness_question", "yes_label", "no_label", "grade_question")


def _wording(values: dict) -> dict:
    """`values` with empty wording fields replaced by their defaults."""
    return {
        name: (value or Domain._meta.get_field(name).get_default())
        if name in WORDING_FIELDS
        else value
        for name, value in values.items()
    }


# Changing these while a release uses the domain would make that release's
# Category strings or domain files disagree with the project.
DOMAIN_EXPORT_FIELDS = ("slug", "export_category")


def can_create_projects(user) -> bool:
    return user.is_authenticated and (
        user.is_superuser or user.has_perm(CREATE_PROJECTS_PERMISSION)
    )


def may_create_projects(user, **_kwargs) -> None:
    """The body check (common.body_guard) of the forms that create a project."""
    if not can_create_projects(user):
        raise PermissionDenied("You may not create projects; ask a site admin.")


def is_site_admin(user, **_kwargs) -> None:
    """The body check of the pages only site admins (superusers) use."""
    if not user.is_superuser:
        raise PermissionDenied("Only site admins create users.")


def _audit(*, actor, action: str, project=None, subject=None, before=None, after=None) -> None:
    SetupEvent.objects.create(
        project=project,
        actor=actor if actor is not None and actor.is_authenticated else None,
        subject=subject,
        action=action,
        before=before or {},
        after=after or {},
    )


def _fields(obj, names) -> dict:
    return {name: getattr(obj, name) for name in names}


def _check_writable(project: Project) -> None:
    if project.archived_at is not None:
        raise SetupError("The project is archived (read-only); unarchive it first.")


def _pseudonym(project: Project) -> str:
    """The next free "annotator-N" of the project (stable, non-identifying)."""
    taken = set(Membership.objects.filter(project=project).values_list("pseudonym", flat=True))
    n = len(taken) + 1
    while f"annotator-{n}" in taken:
        n += 1
    return f"annotator-{n}"


# --- Projects ----------------------------------------------------------------------------


def create_project(
    *,
    actor,
    name: str,
    slug: str = "",
    description: str = "",
    guidelines: str = "",
    licence: str = "",
    votes_per_item: int = 3,
    escalation_votes: int = 2,
    agree_share: float = 0.8,
    allow_tie: bool = True,
    allow_none_pick: bool = True,
    ranking_least_w: float = 0.5,
    require_rationale: bool = False,
    lease_minutes: int = 30,
    check_rate: float = 0.0,
    check_threshold: float = 0.7,
    check_minimum: int = 10,
    seed: int = 0,
    preset: str = "mrb",
    preference_scale: str = PreferenceScale.AB,
    task: str = Task.PAIRWISE,
    qualification_required: bool = False,
    qualification_pass_mark: float = 0.8,
    qualification_retry_hours: int = 24,
) -> Project:
    """A new project with the preset's domains; its creator becomes its admin.
    `task`: what a vote answers (pairwise items have exactly two responses)."""
    if not can_create_projects(actor):
        raise SetupError("You may not create projects; ask a site admin for the permission.")
    if preset not in PRESETS:
        raise SetupError(
            f"unknown preset {preset!r}; use one of {', '.join(PRESETS)}", field="preset"
        )
    _check_scale(preference_scale)
    if not 0 <= ranking_least_w <= 1:
        raise SetupError("Kendall's W runs from 0 to 1.", field="ranking_least_w")
    if task not in Task.values:
        raise SetupError(
            f"unknown task {task!r}; use one of {', '.join(Task.values)}", field="task"
        )
    _check_check_settings({"check_rate": check_rate, "check_threshold": check_threshold})
    if qualification_required:
        _check_qualification(task)
    slug = slug or slugify(name)[:80]
    if not slug:
        raise SetupError("Give the project a slug (letters, digits, - and _).", field="slug")
    with transaction.atomic():
        if Project.objects.filter(slug=slug).exists():
            raise SetupError(f"A project with the slug {slug!r} exists already.", field="slug")
        project = Project.objects.create(
            slug=slug,
            name=name,
            description=description,
            guidelines=guidelines,
            licence=licence,
            votes_per_item=votes_per_item,
            escalation_votes=escalation_votes,
            agree_share=agree_share,
            allow_tie=allow_tie,
            allow_none_pick=allow_none_pick,
            ranking_least_w=ranking_least_w,
            preference_scale=preference_scale,
            task=task,
            require_rationale=require_rationale,
            lease_minutes=lease_minutes,
            check_rate=check_rate,
            check_threshold=check_threshold,
            check_minimum=check_minimum,
            seed=seed,
            qualification_required=qualification_required,
            qualification_pass_mark=qualification_pass_mark,
            qualification_retry_hours=qualification_retry_hours,
            created_by=actor,
        )
        _, domains = PRESETS[preset]
        Domain.objects.bulk_create(
            Domain(
                project=project,
                slug=d_slug,
                title=title,
                export_category=category,
                kind=kind,
                position=position,
                **DOMAIN_WORDING.get(d_slug, {}),
            )
            for position, (d_slug, title, category, kind) in enumerate(domains)
        )
        Membership.objects.create(
            project=project, user=actor, role=Role.ADMIN, pseudonym=_pseudonym(project)
        )
        _audit(
            actor=actor,
            action="project_created",
            project=project,
            after={
                "slug": slug,
                "preset": preset,
                "votes_per_item": votes_per_item,
                "escalation_votes": escalation_votes,
                "agree_share": agree_share,
                "ranking_least_w": ranking_least_w,
                **_fields(project, PROJECT_FIELDS),
            },
        )
    return project


def update_project(*, actor, project: Project, **changes) -> list[str]:
    """Change the project's settings; returns the names of the fields changed."""
    unknown = set(changes) - set(PROJECT_FIELDS)
    if unknown:
        raise SetupError(f"not a project setting: {', '.join(sorted(unknown))}")
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=project.pk)
        _check_writable(project)
        before = _fields(project, PROJECT_FIELDS)
        changed = [name for name, value in changes.items() if before[name] != value]
        if not changed:
            return []
        if "preference_scale" in changed:
            _check_scale_change(project, changes["preference_scale"])
        _check_check_settings({name: changes[name] for name in changed})
        if changes.get("qualification_required"):
            _check_qualification(project.task)
        for name in changed:
            setattr(project, name, changes[name])
        project.save(update_fields=changed)
        if "qualification_required" in changed and project.qualification_required:
            # Annotators who already judged here are not sent back to qualify
            # (docs/decisions.md, issue 36): admitted now, by the admin.
            Membership.objects.filter(
                project=project, role=Role.ANNOTATOR, judged__gt=0, admitted_at__isnull=True
            ).update(admitted_at=timezone.now(), admitted_by=actor)
        _audit(
            actor=actor,
            action="project_updated",
            project=project,
            before={name: before[name] for name in changed},
            after={name: changes[name] for name in changed},
        )
    return changed


def _check_check_settings(values: dict) -> None:
    """The check rate and threshold are shares (0 to 1)."""
    for name in ("check_rate", "check_threshold"):
        if name in values and not 0 <= values[name] <= 1:
            raise SetupError(f"{name} runs from 0 to 1.", field=name)


def _check_qualification(task: str) -> None:
    """The qualification page serves pairs (issue 36): no other task yet."""
    if task != Task.PAIRWISE:
        raise SetupError(
            "Qualification is served for pairwise projects only (for now).",
            field="qualification_required",
        )


def _check_scale(scale: str) -> None:
    if scale not in PreferenceScale.values:
        raise SetupError(
            f"preference_scale is one of {', '.join(PreferenceScale.values)}",
            field="preference_scale",
        )


def _check_scale_change(project: Project, scale: str) -> None:
    """The scale changes only while nobody has voted: votes on one scale are
    not votes on another. An A/B project has no consensus strength."""
    _check_scale(scale)
    if Judgement.objects.filter(assignment__item__project=project).exists():
        raise SetupError(
            "The project has votes: its preference scale (what annotators were asked) "
            "cannot change.",
            field="preference_scale",
        )
    if scale == PreferenceScale.AB and project.consensus_strength is not None:
        raise SetupError(
            "The agreement rule's consensus strength needs a graded scale: turn it off on "
            "the rule page first.",
            field="preference_scale",
        )


def set_import_roots(*, actor, project: Project, roots: list[str]) -> list[str]:
    """Choose which of the site's IMPORT_ROOTS `project` may import from by
    server path. Site admins (superusers) only: a project admin choosing
    their own would read any team's folders (issue 29). Returns the roots
    stored, in the site's order."""
    if not (actor.is_authenticated and actor.is_active and actor.is_superuser):
        raise PermissionDenied("Only site admins choose a project's import roots.")
    unknown = [root for root in roots if root not in settings.IMPORT_ROOTS]
    if unknown:
        raise SetupError(
            f"not an import root of this site (IMPORT_ROOTS): {', '.join(unknown)}",
            field="import_roots",
        )
    chosen = [root for root in settings.IMPORT_ROOTS if root in roots]
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=project.pk)
        before = list(project.import_roots)
        if before == chosen:
            return chosen
        project.import_roots = chosen
        project.save(update_fields=["import_roots"])
        _audit(
            actor=actor,
            action="import_roots_changed",
            project=project,
            before={"import_roots": before},
            after={"import_roots": chosen},
        )
    return chosen


def archive_project(*, actor, project: Project) -> Project:
    """Read-only from now on: no claims, imports or setup changes; votes,
    verdicts and releases stay. Open leases return to the pool."""
    with transaction.atomic():
        if not Project.objects.filter(pk=project.pk, archived_at__isnull=True).update(
            archived_at=timezone.now()
        ):
            raise SetupError("The project is archived already.")
        open_leases = Assignment.objects.filter(item__project=project, status=AssignmentStatus.OPEN)
        released = release_open_leases(open_leases, project_id=project.pk)
        _audit(
            actor=actor,
            action="project_archived",
            project=project,
            after={"released_leases": len(released)},
        )
    project.refresh_from_db(fields=["archived_at"])
    return project


def unarchive_project(*, actor, project: Project) -> Project:
    with transaction.atomic():
        if not Project.objects.filter(pk=project.pk, archived_at__isnull=False).update(
            archived_at=None
        ):
            raise SetupError("The project is not archived.")
        _audit(actor=actor, action="project_unarchived", project=project)
    project.refresh_from_db(fields=["archived_at"])
    return project


def delete_project(*, actor, project: Project) -> None:
    """Only a project nobody has voted on (nor released) can be deleted;
    any other is archived instead."""
    if Judgement.objects.filter(assignment__item__project=project).exists():
        raise SetupError("The project has votes: archive it instead of deleting it.")
    with transaction.atomic():
        try:
            # A site-wide record survives the project (project set to NULL is
            # not possible: events cascade), so the actor's trail names it.
            _audit(actor=actor, action="project_deleted", before={"slug": project.slug})
            project.delete()
        except IntegrityError as exc:  # pragma: no cover - a release or audit holds it
            raise SetupError(f"The project cannot be deleted ({exc}); archive it.") from None


# --- Domains -----------------------------------------------------------------------------


def _check_domain(project: Project, values: dict, *, exclude_pk: int | None = None) -> None:
    others = Domain.objects.filter(project=project).exclude(pk=exclude_pk)
    if "slug" in values:
        if values["slug"] != slugify(values["slug"]) or not values["slug"]:
            raise SetupError("A slug is lower-case letters, digits, - and _.", field="slug")
        if others.filter(slug=values["slug"]).exists():
            raise SetupError(f"The project has a domain {values['slug']!r}.", field="slug")
    if "export_category" in values:
        if not values["export_category"].strip():
            raise SetupError(
                "The export Category string may not be empty.", field="export_category"
            )
        if others.filter(export_category=values["export_category"]).exists():
            raise SetupError(
                f"Another domain writes the Category {values['export_category']!r}.",
                field="export_category",
            )
    if "kind" in values and values["kind"] not in DomainKind.values:
        raise SetupError(f"kind is one of {', '.join(DomainKind.values)}", field="kind")


def add_domain(
    *,
    actor,
    project: Project,
    slug: str,
    title: str,
    export_category: str,
    kind: str,
    guidelines: str = "",
    correctness_question: str = "",
    yes_label: str = "",
    no_label: str = "",
    asks_grade: bool = False,
    grade_question: str = "",
) -> Domain:
    values = {"slug": slug, "export_category": export_category, "kind": kind}
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=project.pk)
        _check_writable(project)
        _check_domain(project, values)
        position = Domain.objects.filter(project=project).count()
        domain = Domain.objects.create(
            project=project,
            slug=slug,
            title=title,
            export_category=export_category,
            kind=kind,
            guidelines=guidelines,
            position=position,
            asks_grade=asks_grade,
            **_wording(
                {
                    "correctness_question": correctness_question,
                    "yes_label": yes_label,
                    "no_label": no_label,
                    "grade_question": grade_question,
                }
            ),
        )
        _audit(
            actor=actor,
            action="domain_added",
            project=project,
            after=_fields(domain, DOMAIN_FIELDS),
        )
    return domain


def update_domain(*, actor, domain: Domain, **changes) -> list[str]:
    """Retitle, rename, re-word a domain. Its slug and export Category string
    only while no release uses it; its kind only while it has no votes."""
    unknown = set(changes) - set(DOMAIN_FIELDS)
    if unknown:
        raise SetupError(f"not a domain field: {', '.join(sorted(unknown))}")
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=domain.project_id)
        _check_writable(project)
        domain = Domain.objects.get(pk=domain.pk)
        before = _fields(domain, DOMAIN_FIELDS)
        changed = {k: v for k, v in _wording(changes).items() if before[k] != v}
        if not changed:
            return []
        _check_domain(project, changed, exclude_pk=domain.pk)
        locked = [name for name in DOMAIN_EXPORT_FIELDS if name in changed]
        if locked:
            reasons = [
                reason
                for _, reason in signals.domain_export_locked.send(sender=Domain, domain=domain)
                if reason
            ]
            if reasons:
                raise SetupError(
                    f"The domain's {' and '.join(locked)} cannot change: {'; '.join(reasons)}.",
                    field=locked[0],
                )
        asked = [name for name in ("kind", "asks_grade") if name in changed]
        if asked and Judgement.objects.filter(assignment__item__domain=domain).exists():
            what = "kind" if asked[0] == "kind" else "grade question (on or off)"
            raise SetupError(
                f"The domain has votes: its {what} (what annotators were asked) cannot change.",
                field=asked[0],
            )
        for name, value in changed.items():
            setattr(domain, name, value)
        domain.save(update_fields=list(changed))
        _audit(
            actor=actor,
            action="domain_updated",
            project=project,
            before={k: before[k] for k in changed},
            after=changed,
        )
    return list(changed)
