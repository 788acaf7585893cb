"""/api/v1/ routes of the curation app (included by config.urls)."""

from django.urls import path

from curation.api import (
    adaptive,
    agreement,
    calibration,
    evaluation,
    exports,
    gold,
    items,
    judges,
    mixes,
    releases,
    verdicts,
)
from curation.api import quality as quality_apis

P = "projects/<slug:slug>/"
R = P + "releases/<int:release_id>/"
J = P + "judge-runs/<int:run_id>/"

urlpatterns = [
    path("mixes/", mixes.MixListApi.as_view(), name="api_mixes"),
    path("mixes/<int:mix_id>/", mixes.MixDetailApi.as_view(), name="api_mix"),
    path("mixes/<int:mix_id>/download/", mixes.MixDownloadApi.as_view(), name="api_mix_download"),
    path(P + "items/", items.ItemGridApi.as_view(), name="api_items"),
    path(P + "items/bulk/", items.ItemBulkApi.as_view(), name="api_items_bulk"),
    path(P + "gold-items/", gold.GoldItemListApi.as_view(), name="api_gold_items"),
    path(P + "gold-items/<int:item_id>/", gold.GoldItemDetailApi.as_view(), name="api_gold_item"),
    path(
        P + "gold-items/<int:item_id>/retire/",
        gold.GoldItemRetireApi.as_view(),
        name="api_gold_item_retire",
    ),
    path(P + "verdicts/", verdicts.VerdictListApi.as_view(), name="api_verdicts"),
    path(P + "verdicts/<int:item_id>/", verdicts.VerdictDetailApi.as_view(), name="api_verdict"),
    path(
        P + "verdicts/<int:item_id>/decision/",
        verdicts.DecisionApi.as_view(),
        name="api_verdict_decision",
    ),
    path(P + "agreement/", agreement.AgreementApi.as_view(), name="api_agreement"),
    path(
        P + "agreement/refresh/",
        agreement.AgreementRefreshApi.as_view(),
        name="api_agreement_refresh",
    ),
    path(
        P + "agreement/annotators/",
        agreement.AnnotatorStatsApi.as_view(),
        name="api_agreement_annotators",
    ),
    path(
        P + "judge-endpoints/",
        judges.JudgeEndpointListApi.as_view(),
        name="api_judge_endpoints",
    ),
    path(R + "judge-runs/", judges.JudgeRunListApi.as_view(), name="api_judge_runs"),
    path(
        P + "judge-runs/",
        calibration.ProjectJudgeRunListApi.as_view(),
        name="api_project_judge_runs",
    ),
    path(P + "calibration/", calibration.CalibrationApi.as_view(), name="api_calibration"),
    path(
        P + "calibration/refresh/",
        calibration.CalibrationRefreshApi.as_view(),
        name="api_calibration_refresh",
    ),
    path(J, judges.JudgeRunDetailApi.as_view(), name="api_judge_run"),
    path(J + "cancel/", judges.JudgeRunCancelApi.as_view(), name="api_judge_run_cancel"),
    path(J + "resume/", judges.JudgeRunResumeApi.as_view(), name="api_judge_run_resume"),
    path(P + "exports/votes/", exports.VoteExportApi.as_view(), name="api_export_votes"),
    path(P + "exports/verdicts/", exports.VerdictExportApi.as_view(), name="api_export_verdicts"),
    path(P + "releases/", releases.ReleaseListApi.as_view(), name="api_releases"),
    path(R, releases.ReleaseDetailApi.as_view(), name="api_release"),
    path(R + "download/", releases.ReleaseDownloadApi.as_view(), name="api_release_download"),
    path(R + "ids/", releases.ReleaseIdMapApi.as_view(), name="api_release_id_map"),
    path(R + "retry/", releases.ReleaseRetryApi.as_view(), name="api_release_retry"),
    path(R + "evaluations/", evaluation.EvaluationListApi.as_view(), name="api_evaluations"),
    path(
        R + "evaluations/<int:evaluation_id>/",
        evaluation.EvaluationDetailApi.as_view(),
        name="api_evaluation",
    ),
    path(
        R + "evaluations/<int:evaluation_id>/items/",
        quality_apis.EntryItemsApi.as_view(),
        name="api_evaluation_items",
    ),
    path(
        P + "items/<int:item_id>/predictions/",
        quality_apis.ItemPredictionsApi.as_view(),
        name="api_item_predictions",
    ),
    path(P + "label-quality/", quality_apis.LabelQualityApi.as_view(), name="api_label_quality"),
    path(P + "adaptive/", adaptive.AdaptiveApi.as_view(), name="api_adaptive"),
    path(
        P + "label-quality/refresh/",
        quality_apis.LabelQualityRefreshApi.as_view(),
        name="api_label_quality_refresh",
    ),
    path(
        P + "label-quality/suspects/",
        quality_apis.SuspectListApi.as_view(),
        name="api_label_quality_suspects",
    ),
    path(
        P + "label-quality/suspects/<int:item_id>/decision/",
        quality_apis.SuspectDecisionApi.as_view(),
        name="api_label_quality_decision",
    ),
]
