from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from common.api import docs as api_docs
from config.health import healthz
from config.password_reset import RateLimitedPasswordResetView

# JSON errors for URLs under /api/ that no route matches (HTML elsewhere).
handler404 = "common.api.errors.not_found"
handler500 = "common.api.errors.server_error"

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    # Ahead of django.contrib.auth's own: the same page, rate limited.
    path(
        "accounts/password_reset/",
        RateLimitedPasswordResetView.as_view(),
        name="password_reset",
    ),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api_schema"),
    path("api/docs/", api_docs.api_docs, name="api_docs"),
    path("api/v1/", include("annotate.api.urls")),
    path("api/v1/", include("curation.api.urls")),
    path("", include("annotate.urls")),
    path("", include("curation.urls")),
]
