"""Pages of the curation app, grouped by sub-domain (included by config.urls)."""

from django.urls import path

from curation.agreement import views as agreement_views
from curation.evaluation import calibration_views
from curation.evaluation import views as evaluation_views
from curation.exports import views as export_views
from curation.gold import views as gold_views
from curation.grid import views as grid_views
from curation.quality import adaptive_views
from curation.quality import views as quality_views
from curation.releases import views as release_views
from curation.releases.mixes import views as mix_views
from curation.verdicts import ranked_views
from curation.verdicts import views as verdict_views

urlpatterns = [
    path("mixes/", mix_views.mix_list, name="mixes"),
    path("mixes/new/", mix_views.mix_new, name="mix_new"),
    path("mixes/<int:mix_id>/", mix_views.mix_detail, name="mix_detail"),
    path("mixes/<int:mix_id>/progress/", mix_views.mix_progress, name="mix_progress"),
    path("mixes/<int:mix_id>/download/", mix_views.mix_download, name="mix_download"),
    path("p/<slug:slug>/rules/", verdict_views.rule_settings, name="rule_settings"),
    path("p/<slug:slug>/agreement/", agreement_views.agreement_dashboard, name="agreement"),
    path(
        "p/<slug:slug>/agreement/refresh/",
        agreement_views.agreement_refresh,
        name="agreement_refresh",
    ),
    path(
        "p/<slug:slug>/agreement/status/", agreement_views.agreement_status, name="agreement_status"
    ),
    path("p/<slug:slug>/items/", grid_views.item_grid, name="item_grid"),
    path("p/<slug:slug>/items/bulk/", grid_views.item_grid_bulk, name="item_grid_bulk"),
    path("p/<slug:slug>/gold/", gold_views.gold_list, name="gold_items"),
    path("p/<slug:slug>/gold/<int:item_id>/retire/", gold_views.gold_retire, name="gold_retire"),
    path(
        "p/<slug:slug>/gold/<int:item_id>/explanation/",
        gold_views.gold_explanation,
        name="gold_explanation",
    ),
    path("p/<slug:slug>/curation/", verdict_views.curation_queue, name="curation_queue"),
    path("p/<slug:slug>/curation/<int:item_id>/", verdict_views.adjudicate, name="adjudicate"),
    path("p/<slug:slug>/curation/<int:item_id>/decide/", verdict_views.decide, name="decide"),
    path("p/<slug:slug>/curation/<int:item_id>/gold/", gold_views.make_gold, name="make_gold"),
    path(
        "p/<slug:slug>/curation/<int:item_id>/decide-ranked/",
        ranked_views.decide_ranked,
        name="decide_ranked",
    ),
    path(
        "p/<slug:slug>/curation/accept/<slug:domain_slug>/",
        verdict_views.accept_domain,
        name="accept_domain",
    ),
    path("p/<slug:slug>/audit/", verdict_views.audit_log, name="audit_log"),
    path("p/<slug:slug>/exports/votes/", export_views.export_votes, name="export_votes"),
    path("p/<slug:slug>/exports/verdicts/", export_views.export_verdicts, name="export_verdicts"),
    path("p/<slug:slug>/releases/", release_views.release_list, name="releases"),
    path("p/<slug:slug>/releases/new/", release_views.release_new, name="release_new"),
    path(
        "p/<slug:slug>/releases/<int:release_id>/",
        release_views.release_detail,
        name="release_detail",
    ),
    path(
        "p/<slug:slug>/releases/<int:release_id>/progress/",
        release_views.release_progress,
        name="release_progress",
    ),
    path(
        "p/<slug:slug>/releases/<int:release_id>/retry/",
        release_views.release_retry,
        name="release_retry",
    ),
    path(
        "p/<slug:slug>/releases/<int:release_id>/download/",
        release_views.release_download,
        name="release_download",
    ),
    path(
        "p/<slug:slug>/releases/<int:release_id>/ids/",
        release_views.release_id_map,
        name="release_id_map",
    ),
    path(
        "p/<slug:slug>/releases/<int:release_id>/diff/",
        release_views.release_diff,
        name="release_diff",
    ),
    path(
        "p/<slug:slug>/releases/<int:release_id>/leaderboard/",
        evaluation_views.leaderboard_view,
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
    path("p/<slug:slug>/adaptive/", adaptive_views.adaptive_votes, name="adaptive_votes"),
    path(
        "p/<slug:slug>/adaptive/settings/",
        adaptive_views.adaptive_settings,
        name="adaptive_settings",
    ),
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
    path("p/<slug:slug>/judges/", evaluation_views.judge_endpoints, name="judge_endpoints"),
    path(
        "p/<slug:slug>/judges/<int:endpoint_id>/",
        evaluation_views.judge_endpoint_edit,
        name="judge_endpoint_edit",
    ),
    path(
        "p/<slug:slug>/judges/<int:endpoint_id>/check/",
        evaluation_views.judge_endpoint_check,
        name="judge_endpoint_check",
    ),
    path(
        "p/<slug:slug>/judges/<int:endpoint_id>/delete/",
        evaluation_views.judge_endpoint_delete,
        name="judge_endpoint_delete",
    ),
    path(
        "p/<slug:slug>/releases/<int:release_id>/judge/",
        evaluation_views.judge_run_new,
        name="judge_run_new",
    ),
    path("p/<slug:slug>/calibration/", calibration_views.calibration_page, name="calibration"),
    path(
        "p/<slug:slug>/calibration/refresh/",
        calibration_views.calibration_refresh,
        name="calibration_refresh",
    ),
    path(
        "p/<slug:slug>/calibration/status/",
        calibration_views.calibration_status,
        name="calibration_status",
    ),
    path(
        "p/<slug:slug>/calibration/judge/",
        calibration_views.project_judge_run_new,
        name="project_judge_run_new",
    ),
    path(
        "p/<slug:slug>/judge-runs/<int:run_id>/",
        evaluation_views.judge_run_detail,
        name="judge_run",
    ),
    path(
        "p/<slug:slug>/judge-runs/<int:run_id>/progress/",
        evaluation_views.judge_run_progress,
        name="judge_run_progress",
    ),
    path(
        "p/<slug:slug>/judge-runs/<int:run_id>/cancel/",
        evaluation_views.judge_run_cancel,
        name="judge_run_cancel",
    ),
    path(
        "p/<slug:slug>/judge-runs/<int:run_id>/resume/",
        evaluation_views.judge_run_resume,
        name="judge_run_resume",
    ),
]
