"""Every operation of the API's OpenAPI schema has a method of the Python
client (or a stated reason not to): a new endpoint without one fails here.
The table is the endpoint <-> method map the client README points to."""

import pytest
from drf_spectacular.generators import SchemaGenerator
from triplet_client import Client

# operationId -> the Client method that calls it.
COVERED = {
    "projects_list": "projects",
    "projects_create": "create_project",
    "projects_retrieve": "project",
    "projects_update": "update_project",
    "domains_list": "domains",
    "domains_create": "add_domain",
    "domains_update": "update_domain",
    "members_list": "members",
    "members_add": "add_member",
    "members_update": "update_member",
    "members_remove": "remove_member",
    "invitations_list": "invitations",
    "invitations_create": "invite",
    "invitations_revoke": "revoke_invitation",
    "invitations_accept": "accept_invitation",
    "items_import": "import_items",
    "adaptive_retrieve": "adaptive",
    "adaptive_update": "set_vote_mode",
    "qualification_status": "qualification",
    "qualification_annotators": "qualification_attempts",
    "qualification_admit": "admit",
    "annotators_list": "annotator_checks",
    "annotators_reinstate": "reinstate",
    "gold_items_list": "gold_items",
    "gold_items_create": "make_gold_item",
    "gold_items_edit": "edit_gold_item",
    "gold_items_retire": "retire_gold_item",
    "assignments_next": "claim_next",
    "assignments_retrieve": "assignment",
    "assignments_judgement": "judge",
    "assignments_skip": "skip",
    "assignments_image": "download_media",
    "assignments_part_image": "download_media",
    "assignments_part_media": "download_media",
    "assignments_part_media_image": "download_media",
    "items_list": "items",
    "items_bulk": "bulk_items",
    "items_predictions": "item_predictions",
    "verdicts_list": "verdicts",
    "verdicts_retrieve": "verdict",
    "verdicts_decide": "decide",
    "agreement_retrieve": "agreement",
    "agreement_refresh": "refresh_agreement",
    "agreement_annotators": "annotator_stats",
    "label_quality_retrieve": "label_quality",
    "label_quality_refresh": "refresh_label_quality",
    "label_quality_suspects": "suspects",
    "label_quality_decide": "decide_suspect",
    "exports_votes": "export_votes",
    "exports_verdicts": "export_verdicts",
    "releases_list": "releases",
    "releases_create": "create_release",
    "releases_retrieve": "release",
    "releases_download": "download_release",
    "releases_retry": "retry_release",
    "releases_id_map": "release_id_map",
    "evaluations_list": "leaderboard",
    "evaluations_create": "evaluate",
    "evaluations_retrieve": "evaluation",
    "evaluations_items": "evaluation_items",
    "judge_endpoints_list": "judge_endpoints",
    "judge_endpoints_create": "add_judge_endpoint",
    "judge_runs_list": "judge_runs",
    "judge_runs_create": "start_judge_run",
    "project_judge_runs_list": "judge_runs",
    "project_judge_runs_create": "start_judge_run",
    "judge_runs_retrieve": "judge_run",
    "judge_runs_cancel": "cancel_judge_run",
    "judge_runs_resume": "resume_judge_run",
    "calibration_retrieve": "calibration",
    "calibration_refresh": "recompute_calibration",
    "mixes_list": "mixes",
    "mixes_create": "create_mix",
    "mixes_retrieve": "mix",
    "mixes_download": "download_mix",
}

# operationId -> why the client has no method for it.
LEFT_OUT: dict[str, str] = {}


def operation_ids() -> set[str]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return {
        op["operationId"]
        for path, ops in schema["paths"].items()
        if path.startswith("/api/v1/")
        for method, op in ops.items()
        if method in ("get", "post", "put", "patch", "delete")
    }


@pytest.mark.filterwarnings("ignore")
def test_every_api_operation_has_a_client_method():
    ids = operation_ids()
    missing = sorted(ids - COVERED.keys() - LEFT_OUT.keys())
    assert missing == [], f"No client method for {missing}: add one (or a reason in LEFT_OUT)."
    assert sorted(COVERED.keys() - ids) == []  # no entry for an operation that is gone
    assert [name for name in COVERED.values() if not callable(getattr(Client, name, None))] == []
