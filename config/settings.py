"""The one settings file. Everything that differs between machines comes from
the environment through the small typed readers below; a bad value stops the
process at start with a message naming the variable.

With nothing set the app runs embedded: SQLite (WAL, IMMEDIATE transactions)
and a Celery broker on the local filesystem, so no server is needed.
"""

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use true/false, 1/0, yes/no)")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [part.strip() for part in raw.split(",") if part.strip()]


DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG and env_bool("REQUIRE_SECRET_KEY", False):
        raise ImproperlyConfigured("SECRET_KEY must be set")
    # Embedded/demo default only; production sets SECRET_KEY (see README).
    SECRET_KEY = "insecure-embedded-default-change-me"
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "django_htmx",
    "annotate",
    "curation",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database ---------------------------------------------------------------
DATA_DIR = Path(env_str("DATA_DIR", str(BASE_DIR / "var")))
DATA_DIR.mkdir(parents=True, exist_ok=True)
DATABASE_URL = env_str("DATABASE_URL", "")
DB_CONN_MAX_AGE = env_int("DB_CONN_MAX_AGE", 60, minimum=0)
DB_PREPARED_STATEMENTS = env_bool("DB_PREPARED_STATEMENTS", True)  # PostgreSQL only
SQLITE_OPTIONS = {
    # IMMEDIATE takes the write lock at BEGIN, so concurrent claims serialise
    # instead of failing with "database is locked" on lock upgrade; WAL lets
    # readers continue meanwhile.
    "transaction_mode": "IMMEDIATE",
    "timeout": 20,
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;",
}
if DATABASE_URL:
    try:
        _db = dj_database_url.parse(DATABASE_URL, conn_max_age=DB_CONN_MAX_AGE)
    except Exception as exc:  # dj_database_url raises several types
        raise ImproperlyConfigured(f"DATABASE_URL could not be parsed: {exc}") from None
    if _db["ENGINE"] == "django.db.backends.sqlite3":
        _db["OPTIONS"] = {**SQLITE_OPTIONS, **_db.get("OPTIONS", {})}
        _db["CONN_MAX_AGE"] = 0
    elif _db["ENGINE"] != "django.db.backends.postgresql":
        raise ImproperlyConfigured(
            f"DATABASE_URL engine {_db['ENGINE']} is not supported (use postgres:// or sqlite://)"
        )
    elif DB_PREPARED_STATEMENTS:
        # Parameters bound on the server let psycopg prepare the statements a
        # connection repeats (after 5 runs), so PostgreSQL parses and plans the
        # claim and submit queries once instead of on every vote: half its CPU
        # per vote (bench/annotate_bench.py). Switch off behind a
        # transaction-mode pooler that cannot keep prepared statements.
        _db["OPTIONS"] = {
            "server_side_binding": True,
            "prepare_threshold": 5,
            **_db.get("OPTIONS", {}),
        }
    _db.setdefault("CONN_HEALTH_CHECKS", True)
    DATABASES = {"default": _db}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": DATA_DIR / "db.sqlite3",
            "OPTIONS": SQLITE_OPTIONS,
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Auth ---------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Files --------------------------------------------------------------------
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(DATA_DIR / "staticfiles")))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
MEDIA_URL = "media/"
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(DATA_DIR / "media")))
# WhiteNoise serves static files from gunicorn. `collectstatic` (Dockerfile,
# `make web`) writes a gzip copy beside each file, sent to browsers that accept
# it. Not the manifest variant (hashed names): KaTeX's CSS names .woff/.ttf
# fonts that are not vendored, which manifest post-processing refuses.
# Finders serve straight from static/ with nothing collected (tests, `make run`)
# but would shadow the compressed copies, so they are on only in that case or
# with DEBUG (where the sources must win over a stale collection).
WHITENOISE_USE_FINDERS = DEBUG or not any(STATIC_ROOT.iterdir())
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Uploads (dataset files and zips) may be large; stream them to disk.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 10 * 1024 * 1024, minimum=1)
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

# --- Images (import validation) -------------------------------------------------
IMAGE_MAX_PIXELS = env_int("IMAGE_MAX_PIXELS", 40_000_000, minimum=1)
IMAGE_MAX_BYTES = env_int("IMAGE_MAX_BYTES", 50 * 1024 * 1024, minimum=1)
IMAGE_ALLOWED_FORMATS = env_list("IMAGE_ALLOWED_FORMATS", ["PNG", "JPEG", "WEBP", "GIF"])
IMPORT_MAX_ERRORS = env_int("IMPORT_MAX_ERRORS", 50, minimum=1)

# --- Celery ---------------------------------------------------------------------
REDIS_URL = env_str("REDIS_URL", "")
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS: dict = {
        # A task a worker took but never acknowledged (acks_late: the worker
        # died mid-task) goes back to the queue after this many seconds. It
        # must exceed the longest task (a redelivered release build takes the
        # build over, see curation.releases); tests shorten it.
        "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600, minimum=1),
        # A broker that does not answer (not merely refuses) must not hold a
        # web request for long: enqueueing is best effort, see config.celery.
        "socket_connect_timeout": 2,
    }
else:
    # A broker that needs no server: kombu's filesystem transport, so the web
    # process and a worker started by `make run` share queues through files.
    _broker_dir = DATA_DIR / "celery"
    for sub in ("out", "processed", "results", "control"):
        (_broker_dir / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://localhost//"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "out"),
        "data_folder_out": str(_broker_dir / "out"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
    }
    CELERY_RESULT_BACKEND = f"file://{_broker_dir / 'results'}"
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# How often each worker queues a sweep for background work whose message was
# lost (besides every time it connects to the broker); see config.celery.
BACKGROUND_SWEEP_SECONDS = env_int("BACKGROUND_SWEEP_SECONDS", 300, minimum=1)
# Fault tests only: seconds a release build sleeps after each item, so a test
# can kill the worker in the middle of a build. Never set it in production.
RELEASE_BUILD_ITEM_DELAY = env_int("RELEASE_BUILD_ITEM_DELAY_MS", 0, minimum=0) / 1000

# --- Annotation defaults -------------------------------------------------------
ASSIGNMENT_LEASE_MINUTES = env_int("ASSIGNMENT_LEASE_MINUTES", 30, minimum=1)

# --- REST framework ---------------------------------------------------------------
REST_FRAMEWORK = {
    # Token first: an anonymous request then gets 401 with WWW-Authenticate
    # (DRF answers 403 when the first class has no authenticate header).
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "annotate.api_paging.Pagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "annotate.api_errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "annotate.api_schema.AutoSchema",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [
        "rest_framework.parsers.JSONParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Triplet Studio API",
    "DESCRIPTION": "Annotate, curate, release and evaluate multimodal reward benchmarks. "
    "Authenticate with `Authorization: Token <key>` (create one at /account/token/) "
    "or a browser session (unsafe methods then need the CSRF token).",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SCHEMA_PATH_PREFIX": "/api/v1",
    # Separate request/response components: multipart uploads and read-only
    # fields then describe exactly what is sent and what comes back.
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {"CorrectnessEnum": "annotate.apis.CORRECTNESS_CHOICES"},
}

# --- Production hardening, switched on by variables -----------------------------------
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0, minimum=0)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
if env_bool("BEHIND_PROXY", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}
