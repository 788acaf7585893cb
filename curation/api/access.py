"""Who may call the curation API: a project's curators and admins, as on the
HTML pages.
"""

from __future__ import annotations

from annotate.api.projects import project_for_api
from annotate.projects import CURATOR_ROLES


def curated_project(request, slug):
    project, _ = project_for_api(request.user, slug, CURATOR_ROLES)
    return project
