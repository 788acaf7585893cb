from django.urls import path

from annotate import views
from annotate.importing import views as import_views
from annotate.loop import views as loop_views
from annotate.qualification import views as qualification_views
from common.api import docs as api_docs

from .setup import annotators
from .setup import views as setup_views

urlpatterns = [
    path("", views.home, name="home"),
    path("p/<slug:slug>/", views.project_overview, name="project"),
    path("p/<slug:slug>/import/", import_views.import_upload, name="import"),
    path("p/<slug:slug>/work/", loop_views.work_start, name="work_start"),
    path("p/<slug:slug>/work/done/", loop_views.work_done, name="work_done"),
    path("p/<slug:slug>/work/undo/", loop_views.work_undo, name="work_undo"),
    path("p/<slug:slug>/work/ahead/", loop_views.work_ahead, name="work_ahead"),
    path("p/<slug:slug>/history/", loop_views.history, name="history"),
    path("p/<slug:slug>/qualify/", qualification_views.qualify, name="qualify"),
    path("p/<slug:slug>/qualify/start/", qualification_views.qualify_start, name="qualify_start"),
    path(
        "p/<slug:slug>/qualify/<int:attempt_id>/<int:item_id>/",
        qualification_views.qualify_answer,
        name="qualify_answer",
    ),
    path(
        "p/<slug:slug>/qualification/",
        qualification_views.qualification_people,
        name="qualification_people",
    ),
    path(
        "p/<slug:slug>/qualification/<int:user_id>/admit/",
        qualification_views.qualification_admit,
        name="qualification_admit",
    ),
    path("a/<int:assignment_id>/", loop_views.work_item, name="work_item"),
    path("a/<int:assignment_id>/submit/", loop_views.work_submit, name="work_submit"),
    path("a/<int:assignment_id>/skip/", loop_views.work_skip, name="work_skip"),
    path("media/<path:path>", views.media, name="media"),
    path("account/token/", api_docs.api_token, name="api_token"),
    # Setting a benchmark up (annotate.setup)
    path("projects/new/", setup_views.project_new, name="project_new"),
    path("p/<slug:slug>/settings/", setup_views.project_settings, name="project_settings"),
    path(
        "p/<slug:slug>/import-roots/",
        setup_views.project_import_roots,
        name="project_import_roots",
    ),
    path("p/<slug:slug>/archive/", setup_views.project_archive, name="project_archive"),
    path("p/<slug:slug>/delete/", setup_views.project_delete, name="project_delete"),
    path("p/<slug:slug>/domains/new/", setup_views.domain_new, name="domain_new"),
    path("p/<slug:slug>/domains/<slug:domain_slug>/", setup_views.domain_edit, name="domain_edit"),
    path("p/<slug:slug>/members/", setup_views.members, name="members"),
    path("p/<slug:slug>/annotators/", annotators.annotators, name="annotators"),
    path(
        "p/<slug:slug>/annotators/<int:user_id>/reinstate/",
        annotators.annotator_reinstate,
        name="annotator_reinstate",
    ),
    path("p/<slug:slug>/members/<int:user_id>/", setup_views.member_action, name="member_action"),
    path("p/<slug:slug>/invitations/", setup_views.invitation_new, name="invitation_new"),
    path(
        "p/<slug:slug>/invitations/<int:invitation_id>/revoke/",
        setup_views.invitation_revoke,
        name="invitation_revoke",
    ),
    path("join/<str:token>/", setup_views.invitation_accept, name="invitation_accept"),
    path("users/new/", setup_views.users_bulk, name="users_bulk"),
    path("markdown/preview/", setup_views.markdown_preview, name="markdown_preview"),
]
