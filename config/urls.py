from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from common import error_pages
from common.api import docs as api_docs
from config.health import healthz
from config.password_reset import RateLimitedPasswordResetView

# JSON errors under /api/, the site's own error pages elsewhere (common.error_pages).
handler400 = "common.api.errors.bad_request"
handler403 = "common.api.errors.forbidden"
handler404 = "common.api.errors.not_found"
handler500 = "common.api.errors.server_error"

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    # The browser's own probe (pages name static/favicon.svg in <head>).
    path("favicon.ico", error_pages.favicon, name="favicon"),
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
