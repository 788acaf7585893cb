"""The one settings file. Everything that differs between machines comes from
the environment through the small typed readers below; a bad value stops the
process at start with a message naming the variable.

With nothing set the app runs embedded: SQLite (WAL, IMMEDIATE transactions)
and a Celery broker on the local filesystem, so no server is needed.
"""

import ipaddress
import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.checks import allowed_hosts_problem, secret_key_weakness
from config.env import env_bool, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent


# DJANGO_ENV=production switches the hardening below to secure defaults and
# refuses to start on an unsafe value; every switch can still be set one by one.
DJANGO_ENV = env_str("DJANGO_ENV", "development")
if DJANGO_ENV not in {"development", "production"}:
    raise ImproperlyConfigured(
        f"DJANGO_ENV={DJANGO_ENV!r} is not an environment (use development or production)"
    )
PRODUCTION = DJANGO_ENV == "production"

DEBUG = env_bool("DEBUG", False)
if PRODUCTION and DEBUG:
    raise ImproperlyConfigured("DEBUG must be off when DJANGO_ENV=production")
EMBEDDED_SECRET_KEY = "insecure-embedded-default-change-me"
SECRET_KEY = env_str("SECRET_KEY", "")
if PRODUCTION and (secret_key_weakness(SECRET_KEY) or SECRET_KEY.startswith(EMBEDDED_SECRET_KEY)):
    # A higher bar than Django's deploy check (security.W009), enforced at start.
    raise ImproperlyConfigured(
        "SECRET_KEY must be set to a random value of at least 50 characters when "
        f"DJANGO_ENV=production ({secret_key_weakness(SECRET_KEY) or 'the embedded default'}; "
        "e.g. python -c 'import secrets; print(secrets.token_urlsafe(64))')"
    )
if not SECRET_KEY:
    if not DEBUG and env_bool("REQUIRE_SECRET_KEY", False):
        raise ImproperlyConfigured("SECRET_KEY must be set")
    # Embedded/demo default only; production sets SECRET_KEY (see README).
    SECRET_KEY = EMBEDDED_SECRET_KEY
if PRODUCTION and not os.environ.get("ALLOWED_HOSTS", "").strip():
    raise ImproperlyConfigured(
        "ALLOWED_HOSTS must name the site's host(s) when DJANGO_ENV=production"
    )
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
if PRODUCTION and allowed_hosts_problem(ALLOWED_HOSTS):
    raise ImproperlyConfigured(
        "ALLOWED_HOSTS is unsafe when DJANGO_ENV=production: "
        + str(allowed_hosts_problem(ALLOWED_HOSTS))
    )
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
    "axes",
    "annotate",
    "curation",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "config.security.SecurityHeadersMiddleware",
    # Embedded SQLite only: a process's write requests queue on a lock rather
    # than in SQLite's sleeping busy handler (config/sqlite_writes.py).
    "config.sqlite_writes.SerialWritesMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # Its process_view runs before CSRF's reads a form body: a view's body
    # check (membership, role) and size bound, unread (common.body_guard).
    "config.request_limits.BodyGuardMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Before CsrfViewMiddleware.process_view reads a form body: refuses
    # oversized and anonymous uploads unread (config.request_limits).
    "config.request_limits.RequestLimitsMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # An empty 405 (a bookmarked form URL) becomes a page with the way back.
    "common.error_pages.MethodNotAllowedPages",
    "django_htmx.middleware.HtmxMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: turns a login refused for too many failures
    # into the lockout page.
    "axes.middleware.AxesMiddleware",
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
    # IMMEDIATE takes the write lock at BEGIN, so concurrent claims serialise instead of failing
    # with "database is locked" on lock upgrade; WAL lets readers continue meanwhile.
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
    _db["CONN_HEALTH_CHECKS"] = True  # dj_database_url sets False (docs/decisions.md, issue 32)
    DATABASES = {"default": _db}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": DATA_DIR / "db.sqlite3",
            "OPTIONS": SQLITE_OPTIONS,
            "CONN_MAX_AGE": DB_CONN_MAX_AGE,
            "CONN_HEALTH_CHECKS": True,
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
# Password-reset mail: SMTP when EMAIL_HOST is set, else printed on the
# console (the embedded default; site admins can also hand out set-password links
# from the members page).
EMAIL_HOST = env_str("EMAIL_HOST", "")
EMAIL_PORT = env_int("EMAIL_PORT", 587, minimum=1)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
EMAIL_BACKEND = (
    "django.core.mail.backends.smtp.EmailBackend"
    if EMAIL_HOST
    else "django.core.mail.backends.console.EmailBackend"
)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "Triplet Studio <noreply@localhost>")
# Password-reset requests (config.password_reset): at most this many per
# address and per client in a window, counted in Django's cache.
PASSWORD_RESET_PER_ADDRESS = env_int("PASSWORD_RESET_PER_ADDRESS", 3, minimum=1)
PASSWORD_RESET_PER_CLIENT = env_int("PASSWORD_RESET_PER_CLIENT", 10, minimum=1)
PASSWORD_RESET_WINDOW_MINUTES = env_int("PASSWORD_RESET_WINDOW_MINUTES", 60, minimum=1)
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
# Nothing is served at MEDIA_URL: every stored file goes through the `media`
# view (/media/…: sign-in, membership, safe headers, byte ranges). It is not
# that view's prefix, or Django's live test server (LiveServerThread's media
# handler) would serve /media/ itself and the browser tests would never see the
# view (issue 35: they did, until a player needed its byte ranges).
MEDIA_URL = "stored-files/"
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(DATA_DIR / "media")))
# WhiteNoise serves static files from gunicorn. `collectstatic` (Dockerfile,
# `make web`) writes a gzip copy beside each file, sent to browsers that accept
# it. Not the manifest variant (hashed names): KaTeX's CSS names .woff/.ttf
# fonts that are not vendored, which manifest post-processing refuses.
# Finders serve straight from static/ with nothing collected (tests, `make run`)
# but would shadow the compressed copies, so they are on only in that case or
# with DEBUG (where the sources must win over a stale collection).
WHITENOISE_USE_FINDERS = DEBUG or not any(STATIC_ROOT.iterdir())
# Stored images ("default") and published releases ("releases") live on the
# local file system unless STORAGE_BACKEND=s3 (or S3_BUCKET is set): then both
# go to an S3-compatible bucket, so several web and worker hosts share them.
STORAGE_BACKEND = env_str("STORAGE_BACKEND", "").strip().lower()
S3_BUCKET = env_str("S3_BUCKET", "").strip()
if not STORAGE_BACKEND:
    STORAGE_BACKEND = "s3" if S3_BUCKET else "local"
if STORAGE_BACKEND == "local":
    _filesystem = {"BACKEND": "django.core.files.storage.FileSystemStorage"}
    _default_storage = _filesystem
    # Release names start with "releases/" inside MEDIA_ROOT, as they always did.
    _release_storage = _filesystem
elif STORAGE_BACKEND == "s3":
    if not S3_BUCKET:
        raise ImproperlyConfigured("STORAGE_BACKEND=s3 needs S3_BUCKET")
    S3_ENDPOINT_URL = env_str("S3_ENDPOINT_URL", "").strip()
    if S3_ENDPOINT_URL and not S3_ENDPOINT_URL.startswith(("http://", "https://")):
        raise ImproperlyConfigured(
            f"S3_ENDPOINT_URL={S3_ENDPOINT_URL!r} must start with http:// or https://"
        )
    S3_ACCESS_KEY_ID = env_str("S3_ACCESS_KEY_ID", "").strip()
    S3_SECRET_ACCESS_KEY = env_str("S3_SECRET_ACCESS_KEY", "").strip()
    if bool(S3_ACCESS_KEY_ID) != bool(S3_SECRET_ACCESS_KEY):
        # Half a key pair would silently fall back to another identity.
        raise ImproperlyConfigured(
            "Set both S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY, or neither "
            "(then boto3's own chain: AWS_* variables, instance role)"
        )
    S3_ADDRESSING_STYLE = env_str("S3_ADDRESSING_STYLE", "auto").strip().lower()
    if S3_ADDRESSING_STYLE not in {"auto", "path", "virtual"}:
        raise ImproperlyConfigured(
            f"S3_ADDRESSING_STYLE={S3_ADDRESSING_STYLE!r} must be auto, path or virtual"
        )
    _s3_options = {
        "bucket_name": S3_BUCKET,
        "endpoint_url": S3_ENDPOINT_URL or None,
        "region_name": env_str("S3_REGION", "").strip() or None,
        "access_key": S3_ACCESS_KEY_ID or None,
        "secret_key": S3_SECRET_ACCESS_KEY or None,
        "location": env_str("S3_PREFIX", "").strip().strip("/"),
        "addressing_style": None if S3_ADDRESSING_STYLE == "auto" else S3_ADDRESSING_STYLE,
        "signature_version": "s3v4",
        "default_acl": None,  # the bucket's policy decides; objects are never public
        "querystring_auth": True,
        # Presigned links (MEDIA_SERVING=presigned) live five minutes: enough
        # to start a player, which keeps its connection for the ranges it asks.
        "querystring_expire": env_int("S3_PRESIGNED_SECONDS", 300, minimum=10),
    }
    # Images are content-addressed: writing a name again writes the same
    # bytes, so no existence check (a round trip per image) before a save.
    _default_storage = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {**_s3_options, "file_overwrite": True},
    }
    # Published release files must never be replaced: a save to a taken name
    # gets another name, which curation.releases refuses.
    _release_storage = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {**_s3_options, "file_overwrite": False},
    }
else:
    raise ImproperlyConfigured(f"STORAGE_BACKEND={STORAGE_BACKEND!r} must be local or s3")
STORAGES = {
    "default": _default_storage,
    "releases": _release_storage,
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Where a release is assembled before it is published. Unset: inside
# MEDIA_ROOT for the local storage (one file system, so publishing is a
# rename and images are hard links), the system temp folder otherwise.
RELEASE_WORK_DIR = env_str("RELEASE_WORK_DIR", "").strip()
# Uploads (dataset files and zips) may be large; stream them to disk.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 10 * 1024 * 1024, minimum=1)
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
# The largest request body (a dataset zip with its images), refused by its
# Content-Length before it is read; and the largest a client that is not
# signed in may send (the log-in form is well under 1 kB).
UPLOAD_MAX_BYTES = env_int("UPLOAD_MAX_BYTES", 2 * 1024**3, minimum=1)
ANONYMOUS_BODY_MAX_BYTES = env_int("ANONYMOUS_BODY_MAX_BYTES", 64 * 1024, minimum=1024)
# The largest body a view that checks nothing before reading it may get (the
# log-in and password forms, the admin, pages that take no body); below
# FILE_UPLOAD_MAX_MEMORY_SIZE, so nobody's unchecked body is spooled to disk
# (config.request_limits.BodyGuardMiddleware, common.body_guard).
UNCHECKED_BODY_MAX_BYTES = env_int("UNCHECKED_BODY_MAX_BYTES", 1024 * 1024, minimum=1024)

# --- Images (import validation) -------------------------------------------------
IMAGE_MAX_PIXELS = env_int("IMAGE_MAX_PIXELS", 40_000_000, minimum=1)
IMAGE_MAX_BYTES = env_int("IMAGE_MAX_BYTES", 50 * 1024 * 1024, minimum=1)
IMAGE_ALLOWED_FORMATS = env_list("IMAGE_ALLOWED_FORMATS", ["PNG", "JPEG", "WEBP", "GIF"])
# --- Video and audio (issue 35) -------------------------------------------------
# What an imported video or audio file may be (annotate.importing.records.MediaLimits).
MEDIA_LIMITS = {
    "max_bytes": env_int("MEDIA_MAX_BYTES", 500 * 1024 * 1024, minimum=1),
    "max_duration_s": env_int("MEDIA_MAX_SECONDS", 600, minimum=1),
    "max_width": env_int("MEDIA_MAX_WIDTH", 3840, minimum=1),
    "max_height": env_int("MEDIA_MAX_HEIGHT", 2160, minimum=1),
    "max_streams": env_int("MEDIA_MAX_STREAMS", 4, minimum=1),
}
# How a video or audio file reaches the browser once the media view checked
# the sign-in and the membership: "stream" (through the web process, byte
# ranges answered here), "accel" (X-Accel-Redirect to MEDIA_ACCEL_PREFIX, an
# nginx `internal` location over the same files: docs/deploy.md) or
# "presigned" (a short-lived bucket URL; object storage only).
MEDIA_SERVING = env_str("MEDIA_SERVING", "stream").strip()
if MEDIA_SERVING not in ("stream", "accel", "presigned"):
    raise ImproperlyConfigured(f"MEDIA_SERVING={MEDIA_SERVING!r}: use stream, accel or presigned")
if MEDIA_SERVING == "presigned" and STORAGE_BACKEND != "s3":
    raise ImproperlyConfigured("MEDIA_SERVING=presigned needs object storage (STORAGE_BACKEND=s3)")
MEDIA_ACCEL_PREFIX = env_str("MEDIA_ACCEL_PREFIX", "/protected-media/").strip()
IMPORT_MAX_ERRORS = env_int("IMPORT_MAX_ERRORS", 50, minimum=1)
# What one imported file may hold, checked by every reader before it decodes
# (annotate.importing.bounds): records, and bytes of one record.
IMPORT_MAX_RECORDS = env_int("IMPORT_MAX_RECORDS", 200_000, minimum=1)
IMPORT_MAX_RECORD_BYTES = env_int("IMPORT_MAX_RECORD_BYTES", 4 * 1024 * 1024, minimum=1024)
# Folders on the server whose datasets and images admins may import by path
# (annotate.importing.roots): comma-separated absolute paths or
# s3://bucket/prefix; empty = off.
IMPORT_ROOTS = env_list("IMPORT_ROOTS", [])
for _root in IMPORT_ROOTS:
    if not (os.path.isabs(_root) or (_root.startswith("s3://") and len(_root) > 5)):
        raise ImproperlyConfigured(
            f"IMPORT_ROOTS: {_root!r} is neither an absolute path nor s3://bucket/prefix"
        )

# --- Cache (rate limits) ----------------------------------------------------------
# Django's cache holds the password-reset counts (config.password_reset). The
# embedded server is one process, whose local memory is enough; with several
# web processes set CACHE_URL (redis://host:port/db, a database other than the
# broker's) so that they share the counts.
CACHE_URL = env_str("CACHE_URL", "")
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}
        if CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

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
# Nothing reads task results (tasks write their outcome to the database). With
# results on, every enqueue also subscribed the web process to the task's
# result channel: during a Redis outage that retried for ~20 s inside the
# request, and the subscriptions piled up in long-lived web processes.
CELERY_TASK_IGNORE_RESULT = True
# How often each worker queues a sweep for background work whose message was
# lost (besides every time it connects to the broker); see config.celery.
BACKGROUND_SWEEP_SECONDS = env_int("BACKGROUND_SWEEP_SECONDS", 300, minimum=1)
# How often each worker returns expired leases of every project (config.celery.ExpireLeases).
LEASE_SWEEP_SECONDS = env_int("LEASE_SWEEP_SECONDS", 60, minimum=1)
# Fault tests only (never in production): a release build's sleep after each item.
RELEASE_BUILD_ITEM_DELAY = env_int("RELEASE_BUILD_ITEM_DELAY_MS", 0, minimum=0) / 1000
# A building release writes a heartbeat every RELEASE_HEARTBEAT_SECONDS; one silent for
# RELEASE_STALE_SECONDS died: every RELEASE_SWEEP_SECONDS each worker re-queues such builds
# (at most RELEASE_MAX_ATTEMPTS times, then fails them; curation.releases.recovery).
RELEASE_HEARTBEAT_SECONDS = env_int("RELEASE_HEARTBEAT_SECONDS", 10, minimum=1)
RELEASE_STALE_SECONDS = env_int("RELEASE_STALE_SECONDS", 120, minimum=10)
RELEASE_SWEEP_SECONDS = env_int("RELEASE_SWEEP_SECONDS", 60, minimum=1)
RELEASE_MAX_ATTEMPTS = env_int("RELEASE_MAX_ATTEMPTS", 3, minimum=1)
if RELEASE_STALE_SECONDS < 3 * RELEASE_HEARTBEAT_SECONDS:
    raise ImproperlyConfigured(
        "RELEASE_STALE_SECONDS must be at least 3 x RELEASE_HEARTBEAT_SECONDS, "
        "or live builds would be taken for dead"
    )

# --- Judge runner (curation/evaluation/judge_runs.py) -------------------------------
# Retries of timeouts, dropped connections, 429 and 5xx: exponential backoff from
# JUDGE_BACKOFF_BASE_MS, capped, never shorter than Retry-After (itself capped).
JUDGE_MAX_RETRIES = env_int("JUDGE_MAX_RETRIES", 5, minimum=0)
JUDGE_BACKOFF_BASE = env_int("JUDGE_BACKOFF_BASE_MS", 1000, minimum=0) / 1000
JUDGE_BACKOFF_MAX = env_int("JUDGE_BACKOFF_MAX_SECONDS", 60, minimum=0)
JUDGE_RETRY_AFTER_MAX = env_int("JUDGE_RETRY_AFTER_MAX_SECONDS", 120, minimum=0)
# Upper bound of a run's requests in flight (the run form's maximum; at most 64).
JUDGE_MAX_CONCURRENCY = env_int("JUDGE_MAX_CONCURRENCY", 16, minimum=1)
# Failed items in a row that stop a run (a dead endpoint is not scored as coin flips).
JUDGE_MAX_CONSECUTIVE_ERRORS = env_int("JUDGE_MAX_CONSECUTIVE_ERRORS", 10, minimum=1)
# A running run silent this long lost its worker: the sweep and Resume take it over.
JUDGE_STALE_SECONDS = env_int("JUDGE_STALE_SECONDS", 120, minimum=30)
# A video sent to a judge as frames: each scaled down to this longest side (pixels).
JUDGE_FRAME_MAX_SIDE = env_int("JUDGE_FRAME_MAX_SIDE", 768, minimum=16)
# Judge requests go only to globally routable addresses (no loopback, private,
# link-local, metadata, ... ranges; see curation/evaluation/judge_client.py). List the
# networks of a judge you run yourself, comma-separated CIDRs, e.g.
# JUDGE_ALLOWED_NETWORKS=10.0.0.0/8 for a vLLM server on the LAN, or
# 127.0.0.1/32 for one on this machine.
JUDGE_ALLOWED_NETWORKS = env_list("JUDGE_ALLOWED_NETWORKS", [])
for _network in JUDGE_ALLOWED_NETWORKS:
    try:
        ipaddress.ip_network(_network, strict=False)
    except ValueError:
        raise ImproperlyConfigured(
            f"JUDGE_ALLOWED_NETWORKS: {_network!r} is not an IP network (e.g. 10.0.0.0/8)"
        ) from None

# --- REST framework ---------------------------------------------------------------
REST_FRAMEWORK = {
    # Token first: an anonymous request then gets 401 with WWW-Authenticate
    # (DRF answers 403 when the first class has no authenticate header).
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "common.api.auth.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "common.api.paging.Pagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "common.api.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "common.api.schema.AutoSchema",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [
        "common.api.errors.BoundedJSONParser",
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
    # Choice sets shared by several fields get one name each.
    "ENUM_NAME_OVERRIDES": {
        "CorrectnessEnum": "common.api.schema.CORRECTNESS_CHOICES",
        "DisplayedChoiceEnum": "common.api.schema.DISPLAYED_CHOICES",
        "CanonicalChoiceEnum": "common.api.schema.CANONICAL_CHOICES",
        "ResponseEnum": "common.api.schema.RESPONSES",
        "PreferenceScaleEnum": "common.api.schema.PREFERENCE_SCALES",
        "GradeEnum": "common.api.schema.GRADES",
        "AssignmentStatusEnum": "annotate.models.AssignmentStatus.choices",
        "VerdictStatusEnum": "curation.models.VerdictStatus.choices",
        "ReleaseStatusEnum": "curation.models.ReleaseStatus.choices",
        "KindEnum": "common.api.schema.DOMAIN_KINDS",
        "PartKindEnum": "annotate.models.PartKind.choices",
        "SlotDecisionEnum": "curation.api.verdicts.DECISION_CHOICES",
        # A release filter's action, one choice set for every filter's field.
        "FilterActionEnum": "curation.api.releases.FILTER_ACTIONS",
    },
}

# --- Production hardening, switched on by variables -----------------------------------
# Off in development (plain http://127.0.0.1), on by default in production.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", PRODUCTION)
# The container health check calls /healthz over plain HTTP inside the network.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", PRODUCTION)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SESSION_COOKIE_HTTPONLY = True
# No script reads the CSRF cookie (forms carry the token), so hide it too.
CSRF_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
# A refused form gets the site's 403 page saying to reload (JSON under /api/).
CSRF_FAILURE_VIEW = "common.error_pages.csrf_failure"
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000 if PRODUCTION else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", True)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
BEHIND_PROXY = env_bool("BEHIND_PROXY", False)
if BEHIND_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# A hardening switch turned off on purpose is a decision, not an oversight:
# the deploy check then stays quiet about it (docs/decisions.md).
SILENCED_SYSTEM_CHECKS: list[str] = []
if PRODUCTION and BEHIND_PROXY and not SECURE_SSL_REDIRECT:
    SILENCED_SYSTEM_CHECKS.append("security.W008")  # the TLS proxy redirects
if PRODUCTION and not SECURE_HSTS_INCLUDE_SUBDOMAINS:
    SILENCED_SYSTEM_CHECKS.append("security.W005")
if PRODUCTION and not SECURE_HSTS_PRELOAD:
    SILENCED_SYSTEM_CHECKS.append("security.W021")

# Sessions end SESSION_COOKIE_AGE after login (not extended by activity, which
# would cost a session write per request).
SESSION_COOKIE_AGE = env_int("SESSION_COOKIE_AGE", 12 * 3600, minimum=60)
SESSION_EXPIRE_AT_BROWSER_CLOSE = env_bool("SESSION_EXPIRE_AT_BROWSER_CLOSE", False)
# Django's database sessions with every configuration, Redis or not: a
# signed-in request must not depend on the broker (docs/decisions.md, Faults;
# cached_db on Redis answers 500 to every signed-in page while Redis is down).
SESSION_ENGINE = "django.contrib.sessions.backends.db"

# Content-Security-Policy in every environment, so tests and `make run` catch
# an inline script or style as soon as it is written. Same shape as Django
# 6's SECURE_CSP; config.security.SecurityHeadersMiddleware sends it.
SECURE_CSP = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    # Extra image origins, e.g. an object store that serves images directly.
    "img-src": ["'self'", *env_list("CSP_IMG_SRC", [])],
    # Extra video/audio origins: the bucket under MEDIA_SERVING=presigned
    # (the players follow the redirect there; without it the page blocks them).
    "media-src": ["'self'", *env_list("CSP_MEDIA_SRC", [])],
    "object-src": ["'none'"],
    "base-uri": ["'self'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}
# Browser features no page uses.
PERMISSIONS_POLICY = (
    "accelerometer=(), camera=(), geolocation=(), gyroscope=(), magnetometer=(), "
    "microphone=(), payment=(), usb=()"
)

# --- Login rate limiting (django-axes) -----------------------------------------------
AUTHENTICATION_BACKENDS = [
    # First, as django-axes asks: refuses a locked-out username+address before
    # any password is checked.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 15, minimum=1))
# Per username and address together: a guesser cannot lock a colleague out
# from elsewhere, and one address cannot try many passwords for one account.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "config.security.login_locked_out"
AXES_CLIENT_IP_CALLABLE = "config.security.client_ip"
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # django-axes logs every successful log-in at INFO; failures and lockouts
    # are warnings and stay.
    "loggers": {"axes": {"level": "WARNING"}},
}
