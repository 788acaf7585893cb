"""The import page."""

from pathlib import Path

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from annotate.importing.forms import ImportForm
from annotate.importing.history import import_recorded_items
from annotate.importing.records import ImportFailed
from annotate.importing.roots import import_server_items, resolve_server_path
from annotate.importing.service import import_uploaded_items
from annotate.projects import ADMIN_ROLES, project_for


@require_http_methods(["GET", "POST"])
@login_required
def import_upload(request, slug):
    project, role = project_for(request.user, slug, ADMIN_ROLES)
    domains = list(project.domains.order_by("position"))
    problems: list[str] = []
    truncated = False
    if request.method == "POST":
        form = ImportForm(request.POST, request.FILES, domains=domains)
        if form.is_valid():
            data = form.cleaned_data
            try:
                if data.get("server_path"):
                    source = {"dataset": data["server_path"], "images": data["server_images"]}
                    do_import, name = import_server_items, data["server_path"]
                else:
                    source = {"dataset": data["dataset"], "images": data["images"]}
                    do_import, name = import_uploaded_items, data["dataset"].name
                result = import_recorded_items(
                    project=project,
                    actor=request.user,
                    surface="page",
                    do_import=do_import,
                    resolve=resolve_server_path,
                    **source,
                    fmt=data["format"] or None,
                    domain=data["domain"] or None,
                    field_map=data["field_map"],
                    gold_from_label=data["gold_from_label"],
                    update=data["update"],
                    options=form.import_options(),
                )
            except ImportFailed as exc:
                problems = [str(p) for p in exc.problems]
                truncated = exc.truncated
            else:
                messages.success(request, f"{Path(name).name}: {result.summary()}")
                return redirect("project", slug=project.slug)
    else:
        form = ImportForm(domains=domains)
    return render(
        request,
        "annotate/import.html",
        {
            "project": project,
            "role": role,
            "form": form,
            "problems": problems,
            "truncated": truncated,
        },
        status=400 if problems or form.errors else 200,
    )
