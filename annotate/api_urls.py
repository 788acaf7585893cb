"""/api/v1/ routes of the annotate app (included by config.urls)."""

from django.urls import path

from . import apis

urlpatterns = [
    path("projects/", apis.ProjectListApi.as_view(), name="api_projects"),
    path("projects/<slug:slug>/domains/", apis.DomainListApi.as_view(), name="api_domains"),
    path("projects/<slug:slug>/imports/", apis.ImportApi.as_view(), name="api_import"),
    path(
        "projects/<slug:slug>/assignments/next/",
        apis.NextAssignmentApi.as_view(),
        name="api_next_assignment",
    ),
    path(
        "assignments/<int:assignment_id>/",
        apis.AssignmentDetailApi.as_view(),
        name="api_assignment",
    ),
    path(
        "assignments/<int:assignment_id>/image/",
        apis.AssignmentImageApi.as_view(),
        name="api_assignment_image",
    ),
    path(
        "assignments/<int:assignment_id>/judgement/",
        apis.SubmitJudgementApi.as_view(),
        name="api_submit_judgement",
    ),
    path(
        "assignments/<int:assignment_id>/skip/",
        apis.SkipAssignmentApi.as_view(),
        name="api_skip_assignment",
    ),
]
