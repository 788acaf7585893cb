from django.urls import path

from curation.evaluation import views as judge_views
from curation.verdicts import views

from .quality import views as quality_views

urlpatterns = [
    path("p/<slug:slug>/rules/", views.rule_settings, name="rule_settings"),
    path("p/<slug:slug>/agreement/", views.agreement_dashboard, name="agreement"),
    path("p/<slug:slug>/agreement/refresh/", views.agreement_refresh, name="agreement_refresh"),
    path("p/<slug:slug>/agreement/status/", views.agreement_status, name="agreement_status"),
    path("p/<slug:slug>/curation/", views.curation_queue, name="curation_queue"),
    path("p/<slug:slug>/curation/<int:item_id>/", views.adjudicate, name="adjudicate"),
    path("p/<slug:slug>/curation/<int:item_id>/decide/", views.decide, name="decide"),
    path(
        "p/<slug:slug>/curation/accept/<slug:domain_slug>/",
        views.accept_domain,
        name="accept_domain",
    ),
    path("p/<slug:slug>/audit/", views.audit_log, name="audit_log"),
    path("p/<slug:slug>/releases/", views.release_list, name="releases"),
    path("p/<slug:slug>/releases/new/", views.release_new, name="release_new"),
    path("p/<slug:slug>/releases/<int:release_id>/", views.release_detail, name="release_detail"),
    path(
        "p/<slug:slug>/releases/<int:release_id>/progress/",
        views.release_progress,
        name="release_progress",
    ),
    path(
        "p/<slug:slug>/releases/<int:release_id>/download/",
        views.release_download,
        name="release_download",
    ),
    path("p/<slug:slug>/releases/<int:release_id>/diff/", views.release_diff, name="release_diff"),
    path(
        "p/<slug:slug>/releases/<int:release_id>/leaderboard/",
        views.leaderboard_view,
        name="leaderboard",
    ),
    path(
        "p/<slug:slug>/releases/<int:release_id>/leaderboard/<int:evaluation_id>/",
        quality_views.entry_items,
        name="entry_items",
    ),
    path(
        "p/<slug:slug>/items/<int:item_id>/models/", quality_views.item_models, name="item_models"
    ),
    path("p/<slug:slug>/label-quality/", quality_views.label_quality_queue, name="label_quality"),
    path(
        "p/<slug:slug>/label-quality/status/",
        quality_views.label_quality_status,
        name="label_quality_status",
    ),
    path(
        "p/<slug:slug>/label-quality/refresh/",
        quality_views.label_quality_refresh,
        name="label_quality_refresh",
    ),
    path(
        "p/<slug:slug>/label-quality/<int:item_id>/",
        quality_views.label_quality_review,
        name="label_quality_review",
    ),
    path(
        "p/<slug:slug>/label-quality/<int:item_id>/decide/",
        quality_views.label_quality_decide,
        name="label_quality_decide",
    ),
    path("p/<slug:slug>/judges/", judge_views.judge_endpoints, name="judge_endpoints"),
    path(
        "p/<slug:slug>/judges/<int:endpoint_id>/",
        judge_views.judge_endpoint_edit,
        name="judge_endpoint_edit",
    ),
    path(
        "p/<slug:slug>/judges/<int:endpoint_id>/delete/",
        judge_views.judge_endpoint_delete,
        name="judge_endpoint_delete",
    ),
    path(
        "p/<slug:slug>/releases/<int:release_id>/judge/",
        judge_views.judge_run_new,
        name="judge_run_new",
    ),
    path("p/<slug:slug>/judge-runs/<int:run_id>/", judge_views.judge_run_detail, name="judge_run"),
    path(
        "p/<slug:slug>/judge-runs/<int:run_id>/progress/",
        judge_views.judge_run_progress,
        name="judge_run_progress",
    ),
    path(
        "p/<slug:slug>/judge-runs/<int:run_id>/cancel/",
        judge_views.judge_run_cancel,
        name="judge_run_cancel",
    ),
    path(
        "p/<slug:slug>/judge-runs/<int:run_id>/resume/",
        judge_views.judge_run_resume,
        name="judge_run_resume",
    ),
]
