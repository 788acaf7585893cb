"""Pages to set a benchmark up: new project, settings and domains, members
and invitations, sign-up through a link, and site admins' bulk users."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from annotate.projects import member_of
from annotate.setup.service import is_site_admin, may_create_projects
from common.body_guard import guard_body, signed_in

from ..importing.roots import project_roots
from ..models import Domain, Membership
from ..projects import ADMIN_ROLES, project_for
from ..rendering import render_markdown
from . import accounts, service, site_users, team
from .forms import (
    AddMemberForm,
    BulkUsersForm,
    DomainForm,
    ImportRootsForm,
    InvitationForm,
    ProjectCreateForm,
    ProjectSettingsForm,
    RoleForm,
    SignUpForm,
)
from .models import Invitation, SetupEvent
from .people import member_rows

SETUP_EVENTS_SHOWN = 30


def _form_error(form, exc: service.SetupError) -> None:
    field = exc.field if exc.field in form.fields else None
    form.add_error(field, str(exc))


# --- Projects ----------------------------------------------------------------------------


@guard_body(may_create_projects)
@require_http_methods(["GET", "POST"])
@login_required
def project_new(request):
    if not service.can_create_projects(request.user):
        raise PermissionDenied("You may not create projects; ask a site admin.")
    form = ProjectCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            project = service.create_project(actor=request.user, **data)
        except service.SetupError as exc:
            _form_error(form, exc)
        else:
            messages.success(
                request,
                f"Project {project.name} created. Next: import items, then invite your team.",
            )
            return redirect("project", slug=project.slug)
    return render(
        request,
        "annotate/setup/project_new.html",
        {"form": form},
        status=400 if form.errors else 200,
    )


@guard_body(member_of(ADMIN_ROLES))
@require_http_methods(["GET", "POST"])
@login_required
def project_settings(request, slug):
    project, role = project_for(request.user, slug, ADMIN_ROLES)
    form = ProjectSettingsForm(request.POST or None, instance=project)
    if request.method == "POST" and form.is_valid():
        changes = {name: form.cleaned_data[name] for name in form.Meta.fields}
        project.refresh_from_db()  # the form wrote its values onto the instance
        try:
            changed = service.update_project(actor=request.user, project=project, **changes)
        except service.SetupError as exc:
            _form_error(form, exc)
        else:
            messages.success(
                request, f"Saved: {', '.join(changed)}." if changed else "Nothing changed."
            )
            return redirect("project_settings", slug=project.slug)
    domains = project.domains.annotate(n_items=Count("items")).order_by("position", "slug")
    events = SetupEvent.objects.filter(project=project).select_related("actor", "subject")[
        :SETUP_EVENTS_SHOWN
    ]
    return render(
        request,
        "annotate/setup/settings.html",
        {
            "project": project,
            "role": role,
            "form": form,
            "site_roots": settings.IMPORT_ROOTS,
            "project_roots": project_roots(project),
            "roots_form": (
                ImportRootsForm(initial={"import_roots": project_roots(project)})
                if request.user.is_superuser
                else None
            ),
            "domains": domains,
            "events": events,
        },
        status=400 if form.errors else 200,
    )


@guard_body(member_of(ADMIN_ROLES))
@require_POST
@login_required
def project_import_roots(request, slug):
    """Site admins choose which import roots the project may read."""
    project, _ = project_for(request.user, slug, ADMIN_ROLES)
    form = ImportRootsForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(form.errors.get("import_roots", ["Choose roots."])))
        return redirect("project_settings", slug=project.slug)
    try:
        # Raises PermissionDenied (403) for anyone but a site admin.
        chosen = service.set_import_roots(
            actor=request.user, project=project, roots=form.cleaned_data["import_roots"]
        )
    except service.SetupError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            f"Import roots: {', '.join(chosen)}."
            if chosen
            else "No import root: server paths are off for this project.",
        )
    return redirect("project_settings", slug=project.slug)


@guard_body(member_of(ADMIN_ROLES))
@require_POST
@login_required
def project_archive(request, slug):
    project, _ = project_for(request.user, slug, ADMIN_ROLES)
    try:
        if "unarchive" in request.POST:
            service.unarchive_project(actor=request.user, project=project)
            messages.success(request, "The project is open again.")
        else:
            service.archive_project(actor=request.user, project=project)
            messages.success(request, "The project is archived: read-only from now on.")
    except service.SetupError as exc:
        messages.error(request, str(exc))
    return redirect("project_settings", slug=project.slug)


@guard_body(member_of(ADMIN_ROLES))
@require_POST
@login_required
def project_delete(request, slug):
    project, _ = project_for(request.user, slug, ADMIN_ROLES)
    if request.POST.get("confirm") != project.slug:
        messages.error(request, "Type the project's slug to confirm deleting it.")
        return redirect("project_settings", slug=project.slug)
    try:
        service.delete_project(actor=request.user, project=project)
    except service.SetupError as exc:
        messages.error(request, str(exc))
        return redirect("project_settings", slug=project.slug)
    messages.success(request, f"Project {project.name} deleted.")
    return redirect("home")


@guard_body(signed_in)
@require_POST
@login_required
def markdown_preview(request):
    """The sanitised HTML of the posted Markdown field (`?field=`), for the
    live preview beside a guidelines box."""
    text = request.POST.get(request.GET.get("field", "text"), "")
    if len(text) > 100_000:
        return HttpResponse("Too long to preview.", status=413)
    return HttpResponse(render_markdown(text) or '<p class="muted">Nothing to preview.</p>')


# --- Domains -----------------------------------------------------------------------------


@guard_body(member_of(ADMIN_ROLES))
@require_http_methods(["GET", "POST"])
@login_required
def domain_new(request, slug):
    project, role = project_for(request.user, slug, ADMIN_ROLES)
    form = DomainForm(request.POST or None, initial={"kind": "preference"})
    if request.method == "POST" and form.is_valid():
        try:
            domain = service.add_domain(actor=request.user, project=project, **form.cleaned_data)
        except service.SetupError as exc:
            _form_error(form, exc)
        else:
            messages.success(request, f"Domain {domain.title} added.")
            return redirect("project_settings", slug=project.slug)
    return render(
        request,
        "annotate/setup/domain_form.html",
        {"project": project, "role": role, "form": form, "domain": None},
        status=400 if form.errors else 200,
    )


@guard_body(member_of(ADMIN_ROLES))
@require_http_methods(["GET", "POST"])
@login_required
def domain_edit(request, slug, domain_slug):
    project, role = project_for(request.user, slug, ADMIN_ROLES)
    domain = get_object_or_404(Domain, project=project, slug=domain_slug)
    initial = {name: getattr(domain, name) for name in service.DOMAIN_FIELDS}
    form = DomainForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            changed = service.update_domain(actor=request.user, domain=domain, **form.cleaned_data)
        except service.SetupError as exc:
            _form_error(form, exc)
        else:
            messages.success(
                request,
                f"Domain saved: {', '.join(changed)}." if changed else "Nothing changed.",
            )
            return redirect("project_settings", slug=project.slug)
    return render(
        request,
        "annotate/setup/domain_form.html",
        {"project": project, "role": role, "form": form, "domain": domain},
        status=400 if form.errors else 200,
    )


# --- Members and invitations ---------------------------------------------------------------


def _members_page(request, project, role, *, add_form=None, invite_form=None, status=200):
    invitations = Invitation.objects.filter(project=project).select_related("created_by")[:50]
    rows = member_rows(project)
    # "Password link" only beside accounts this person may manage: a project
    # role grants no power over a member's account (annotate.setup.accounts).
    manageable = {
        row.membership.user_id
        for row in rows
        if accounts.may_manage_account(request.user, row.membership.user)
    }
    return render(
        request,
        "annotate/setup/members.html",
        {
            "project": project,
            "role": role,
            "rows": rows,
            "manageable": manageable,
            "invitations": invitations,
            "add_form": add_form or AddMemberForm(),
            "invite_form": invite_form or InvitationForm(),
            "role_choices": RoleForm.base_fields["role"].choices,
            "new_link": request.session.pop(f"new-invitation-{project.pk}", None),
            "password_link": request.session.pop(f"password-link-{project.pk}", None),
        },
        status=status,
    )


@guard_body(member_of(ADMIN_ROLES))
@require_http_methods(["GET", "POST"])
@login_required
def members(request, slug):
    """The team: GET lists it; POST adds an existing user with a role."""
    project, role = project_for(request.user, slug, ADMIN_ROLES)
    if request.method == "GET":
        return _members_page(request, project, role)
    form = AddMemberForm(request.POST)
    if form.is_valid():
        try:
            team.add_member(
                actor=request.user,
                project=project,
                user=form.cleaned_data["user"],
                role=form.cleaned_data["role"],
            )
        except service.SetupError as exc:
            _form_error(form, exc)
        else:
            messages.success(
                request,
                f"{form.cleaned_data['user'].get_username()} added as {form.cleaned_data['role']}.",
            )
            return redirect("members", slug=project.slug)
    return _members_page(request, project, role, add_form=form, status=400)


def _member(project, user_id: int):
    membership = (
        Membership.objects.filter(project=project, user_id=user_id).select_related("user").first()
    )
    if membership is None:
        raise Http404("No such member")
    return membership.user


MEMBER_ACTIONS = ("role", "deactivate", "reactivate", "remove", "password_link")


@guard_body(member_of(ADMIN_ROLES))
@require_POST
@login_required
def member_action(request, slug, user_id):
    """One change to one member: `action` is role (with `role`), deactivate,
    reactivate, remove or password_link."""
    project, _ = project_for(request.user, slug, ADMIN_ROLES)
    user = _member(project, user_id)
    action = request.POST.get("action")
    name = user.get_username()
    try:
        if action == "role":
            form = RoleForm(request.POST)
            if not form.is_valid():
                raise service.SetupError("Choose a role.")
            team.change_member_role(
                actor=request.user, project=project, user=user, role=form.cleaned_data["role"]
            )
            messages.success(request, f"{name} is now {form.cleaned_data['role']}.")
        elif action == "deactivate":
            released = team.deactivate_member(actor=request.user, project=project, user=user)
            messages.success(
                request,
                f"{name} deactivated; {len(released)} item{'s' if len(released) != 1 else ''} "
                "they held went back to the pool. Their votes stay.",
            )
        elif action == "reactivate":
            team.reactivate_member(actor=request.user, project=project, user=user)
            messages.success(request, f"{name} is active again.")
        elif action == "remove":
            team.remove_member(actor=request.user, project=project, user=user)
            messages.success(request, f"{name} removed from the project.")
        elif action == "password_link":
            # Raises AccountRefused (403) unless a site admin may manage this account.
            path = site_users.set_password_link(actor=request.user, project=project, user=user)
            request.session[f"password-link-{project.pk}"] = {
                "username": name,
                "url": request.build_absolute_uri(path),
            }
        else:
            return HttpResponse(
                f"Unknown action; use one of {', '.join(MEMBER_ACTIONS)}.", status=400
            )
    except service.SetupError as exc:
        messages.error(request, str(exc))
    return redirect("members", slug=project.slug)


@guard_body(member_of(ADMIN_ROLES))
@require_POST
@login_required
def invitation_new(request, slug):
    project, role = project_for(request.user, slug, ADMIN_ROLES)
    form = InvitationForm(request.POST)
    if form.is_valid():
        try:
            new = team.create_invitation(
                actor=request.user,
                project=project,
                role=form.cleaned_data["role"],
                max_uses=form.limit(),
                expires_in_days=form.cleaned_data["expires_in_days"],
                note=form.cleaned_data["note"],
            )
        except service.SetupError as exc:
            _form_error(form, exc)
        else:
            # Shown once, on the page the redirect leads to: only its digest is stored.
            request.session[f"new-invitation-{project.pk}"] = {
                "url": request.build_absolute_uri(new.path),
                "role": new.invitation.role,
                "max_uses": new.invitation.max_uses,
                "expires_at": new.invitation.expires_at.isoformat(),
            }
            return redirect("members", slug=project.slug)
    return _members_page(request, project, role, invite_form=form, status=400)


@guard_body(member_of(ADMIN_ROLES))
@require_POST
@login_required
def invitation_revoke(request, slug, invitation_id):
    project, _ = project_for(request.user, slug, ADMIN_ROLES)
    invitation = get_object_or_404(Invitation, project=project, pk=invitation_id)
    try:
        team.revoke_invitation(actor=request.user, invitation=invitation)
        messages.success(request, "Invitation revoked: its link no longer works.")
    except service.SetupError as exc:
        messages.error(request, str(exc))
    return redirect("members", slug=project.slug)


@require_http_methods(["GET", "POST"])
def invitation_accept(request, token):
    """Open to anyone holding the link: a signed-in person joins with one
    click; a newcomer creates an account here and joins."""
    invitation = team.find_invitation(token)
    if invitation is None:
        return render(request, "annotate/setup/invitation_invalid.html", status=404)
    project = invitation.project
    form = None
    if request.user.is_authenticated:
        if request.method == "POST":
            try:
                team.accept_invitation(token=token, user=request.user)
            except service.SetupError as exc:
                messages.error(request, str(exc))
                return redirect("home")
            messages.success(request, f"You joined {project.name} as {invitation.role}.")
            return redirect("project", slug=project.slug)
    else:
        form = SignUpForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                user, _ = team.sign_up_with_invitation(
                    token=token,
                    username=form.cleaned_data["username"],
                    email=form.cleaned_data["email"],
                    password=form.cleaned_data["password1"],
                )
            except service.SetupError as exc:
                _form_error(form, exc)
            else:
                login(request, user, backend=settings.AUTHENTICATION_BACKENDS[-1])
                messages.success(
                    request, f"Welcome, {user.get_username()}: you joined {project.name}."
                )
                return redirect("project", slug=project.slug)
    return render(
        request,
        "annotate/setup/invitation_accept.html",
        {"invitation": invitation, "project": project, "form": form},
        status=400 if form is not None and form.errors else 200,
    )


# --- Site admins: users in bulk -------------------------------------------------------------


@guard_body(is_site_admin, uploads=True)
@require_http_methods(["GET", "POST"])
@login_required
def users_bulk(request):
    if not request.user.is_superuser:
        raise PermissionDenied("Only site admins create users.")
    form = BulkUsersForm(request.POST or None, request.FILES or None)
    created = []
    problems: list[str] = []
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            created = site_users.create_users_from_csv(
                actor=request.user,
                data=upload.read(site_users.CSV_MAX_BYTES + 1),
                project=form.cleaned_data["project"],
                filename=upload.name,
            )
        except site_users.BulkUsersInvalid as exc:
            problems = exc.problems
        except service.SetupError as exc:
            problems = [str(exc)]
    users = get_user_model().objects.order_by("-date_joined")[:50]
    links = [
        {"user": c.user, "role": c.role, "url": request.build_absolute_uri(c.set_password_path)}
        for c in created
    ]
    return render(
        request,
        "annotate/setup/users_bulk.html",
        {"form": form, "created": links, "problems": problems, "users": users},
        status=400 if problems or form.errors else 200,
    )
