from django.urls import path

from . import api_pages, views

urlpatterns = [
    path("", views.home, name="home"),
    path("p/<slug:slug>/", views.project_overview, name="project"),
    path("p/<slug:slug>/import/", views.import_upload, name="import"),
    path("p/<slug:slug>/work/", views.work_start, name="work_start"),
    path("p/<slug:slug>/work/done/", views.work_done, name="work_done"),
    path("p/<slug:slug>/work/undo/", views.work_undo, name="work_undo"),
    path("p/<slug:slug>/work/ahead/", views.work_ahead, name="work_ahead"),
    path("p/<slug:slug>/history/", views.history, name="history"),
    path("a/<int:assignment_id>/", views.work_item, name="work_item"),
    path("a/<int:assignment_id>/submit/", views.work_submit, name="work_submit"),
    path("a/<int:assignment_id>/skip/", views.work_skip, name="work_skip"),
    path("media/<path:path>", views.media, name="media"),
    path("account/token/", api_pages.api_token, name="api_token"),
]
