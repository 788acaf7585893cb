import pytest


@pytest.fixture(autouse=True)
def _judge_on_loopback_allowed(settings):
    """The fake judge servers listen on 127.0.0.1, which judge requests may
    reach only when JUDGE_ALLOWED_NETWORKS lists it (tests of the guard
    itself set it back to nothing)."""
    settings.JUDGE_ALLOWED_NETWORKS = ["127.0.0.1/32"]
