"""Test connection for a judge endpoint (issue 31): before a run is
started, an admin can see whether the address answers, the key is accepted
and the model exists. One small request through the same SSRF-guarded
client a run uses (judge_client), with the stored settings and key."""

from __future__ import annotations

from django.conf import settings

from curation.evaluation import judge_client
from curation.evaluation.key_encryption import UndecryptableKey
from curation.models import JudgeEndpoint

# A check should answer while the admin waits on the page.
CHECK_TIMEOUT_SECONDS = 30.0


def check_endpoint(*, endpoint: JudgeEndpoint) -> judge_client.ConnectionCheck:
    try:
        key = endpoint.api_key()
    except UndecryptableKey as exc:
        return judge_client.ConnectionCheck(False, str(exc), 0.0)
    return judge_client.check_connection(
        judge_client.Endpoint(
            base_url=endpoint.base_url,
            model=endpoint.model,
            api_key=key,
            max_tokens=endpoint.max_tokens,
            timeout=min(endpoint.timeout_seconds, CHECK_TIMEOUT_SECONDS),
            allowed_networks=tuple(settings.JUDGE_ALLOWED_NETWORKS),
        )
    )
