"""/api/v1/ routes of the annotate app (included by config.urls)."""

from django.urls import path

from annotate.api import assignments, content, imports
from annotate.api import checks as checks_api
from annotate.qualification import api as qualification_api
from annotate.setup import api as setup_api

urlpatterns = [
    # GET lists (annotate.api.projects); POST creates (annotate.setup.api).
    path("projects/", setup_api.ProjectsApi.as_view(), name="api_projects"),
    path("projects/<slug:slug>/", setup_api.ProjectDetailApi.as_view(), name="api_project"),
    path("projects/<slug:slug>/domains/", setup_api.DomainsApi.as_view(), name="api_domains"),
    path(
        "projects/<slug:slug>/domains/<slug:domain_slug>/",
        setup_api.DomainDetailApi.as_view(),
        name="api_domain",
    ),
    path("projects/<slug:slug>/members/", setup_api.MembersApi.as_view(), name="api_members"),
    path(
        "projects/<slug:slug>/annotators/",
        checks_api.AnnotatorsApi.as_view(),
        name="api_annotators",
    ),
    path(
        "projects/<slug:slug>/annotators/<int:user_id>/reinstate/",
        checks_api.ReinstateApi.as_view(),
        name="api_annotator_reinstate",
    ),
    path(
        "projects/<slug:slug>/members/<int:user_id>/",
        setup_api.MemberDetailApi.as_view(),
        name="api_member",
    ),
    path(
        "projects/<slug:slug>/invitations/",
        setup_api.InvitationsApi.as_view(),
        name="api_invitations",
    ),
    path(
        "invitations/accept/",
        setup_api.InvitationAcceptApi.as_view(),
        name="api_invitation_accept",
    ),
    path(
        "projects/<slug:slug>/invitations/<int:invitation_id>/",
        setup_api.InvitationDetailApi.as_view(),
        name="api_invitation",
    ),
    path("projects/<slug:slug>/imports/", imports.ImportApi.as_view(), name="api_import"),
    path(
        "projects/<slug:slug>/qualification/",
        qualification_api.QualificationStatusApi.as_view(),
        name="api_qualification",
    ),
    path(
        "projects/<slug:slug>/qualification/annotators/",
        qualification_api.QualificationAnnotatorsApi.as_view(),
        name="api_qualification_annotators",
    ),
    path(
        "projects/<slug:slug>/qualification/admit/",
        qualification_api.QualificationAdmitApi.as_view(),
        name="api_qualification_admit",
    ),
    path(
        "projects/<slug:slug>/assignments/next/",
        assignments.NextAssignmentApi.as_view(),
        name="api_next_assignment",
    ),
    path(
        "assignments/<int:assignment_id>/",
        assignments.AssignmentDetailApi.as_view(),
        name="api_assignment",
    ),
    path(
        "assignments/<int:assignment_id>/image/",
        assignments.AssignmentImageApi.as_view(),
        name="api_assignment_image",
    ),
    path(
        "assignments/<int:assignment_id>/images/<str:place>/<int:index>/",
        content.AssignmentPartImageApi.as_view(),
        name="api_assignment_part_image",
    ),
    path(
        "assignments/<int:assignment_id>/media/<str:place>/<int:index>/",
        content.AssignmentPartMediaApi.as_view(),
        name="api_assignment_part_media",
    ),
    path(
        "assignments/<int:assignment_id>/media/<str:place>/<int:index>/<str:derivative>/",
        content.AssignmentPartMediaImageApi.as_view(),
        name="api_assignment_part_media_image",
    ),
    path(
        "assignments/<int:assignment_id>/judgement/",
        assignments.SubmitJudgementApi.as_view(),
        name="api_submit_judgement",
    ),
    path(
        "assignments/<int:assignment_id>/skip/",
        assignments.SkipAssignmentApi.as_view(),
        name="api_skip_assignment",
    ),
]
