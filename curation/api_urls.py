"""/api/v1/ routes of the curation app (included by config.urls)."""

urlpatterns: list = []
