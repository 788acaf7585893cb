"""The import page."""

from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from annotate.importing import staging
from annotate.importing.forms import ImportForm
from annotate.importing.history import import_recorded_items
from annotate.importing.records import ImportFailed
from annotate.importing.roots import (
    import_server_items,
    project_roots,
    resolve_server_path,
    roots_enabled,
)
from annotate.importing.service import import_items_from_paths
from annotate.projects import ADMIN_ROLES, member_of, project_for
from common.body_guard import guard_body


@guard_body(member_of(ADMIN_ROLES), uploads=True)
@require_http_methods(["GET", "POST"])
@login_required
def import_upload(request, slug):
    project, role = project_for(request.user, slug, ADMIN_ROLES)
    domains = list(project.domains.order_by("position"))
    problems: list[str] = []
    truncated = False
    staged = None
    server_paths = roots_enabled(project)
    if request.method == "POST":
        # A refused attempt's files, found only for this user and project.
        staged = staging.find(request.user, project, request.POST.get("staged", ""))
        form = ImportForm(
            request.POST, request.FILES, domains=domains, server_paths=server_paths, staged=staged
        )
        valid = form.is_valid()
        data = form.cleaned_data
        uploads = {kind: data.get(kind) for kind in ("dataset", "images")}
        if any(uploads.values()) and not data.get("server_path"):
            # Kept until the import succeeds, so that a refusal (or a wrong
            # option) needs no second upload (docs/decisions.md, issue 31).
            staged = staging.stage(request.user, project, **uploads, previous=staged)
        if valid:
            if data.get("server_path"):
                source = {"dataset": data["server_path"], "images": data["server_images"]}
                do_import, name = import_server_items, data["server_path"]
            else:
                assert staged is not None and staged.dataset is not None
                source = {"dataset": staged.dataset, "images": staged.images}
                do_import, name = import_items_from_paths, staged.dataset.name
            try:
                result = import_recorded_items(
                    project=project,
                    actor=request.user,
                    surface="page",
                    do_import=do_import,
                    resolve=lambda path: resolve_server_path(path, project_roots(project)),
                    **source,
                    fmt=data["format"] or None,
                    domain=data["domain"] or None,
                    field_map=data["field_map"],
                    gold_from_label=data["gold_from_label"],
                    cast_votes=data["cast_votes"],
                    options=form.import_options(),
                )
            except ImportFailed as exc:
                problems = [str(p) for p in exc.problems]
                truncated = exc.truncated
            else:
                if staged is not None:
                    staging.discard(staged)
                messages.success(request, f"{Path(name).name}: {result.summary()}")
                return redirect("project", slug=project.slug)
        if staged is not None:
            form.data = form.data.copy()
            form.data["staged"] = staged.token
    else:
        form = ImportForm(domains=domains, server_paths=server_paths)
    return render(
        request,
        "annotate/import.html",
        {
            "project": project,
            "role": role,
            "form": form,
            "staged": staged,
            "problems": problems,
            "truncated": truncated,
            # The site has import roots, none open to this project: say who opens one.
            "roots_closed": bool(settings.IMPORT_ROOTS) and not roots_enabled(project),
        },
        status=400 if problems or form.errors else 200,
    )
