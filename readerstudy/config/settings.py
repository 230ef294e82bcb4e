"""ReaderStudy settings, all driven by the environment (see .env.example)."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF, UNSAFE_INLINE
from django.core.exceptions import ImproperlyConfigured
from dotenv import load_dotenv

from readerstudy.config.env import (
    IMMEDIATE_TASKS,
    LOCMEM_CACHE,
    env_bool,
    env_cache,
    env_int,
    env_list,
    env_str,
    env_tasks,
)

BASE_DIR = Path(__file__).resolve().parents[2]

# A .env file in the project (or ENV_FILE) fills in what the real environment leaves unset, so
# `manage.py` commands work in a checkout without exporting variables first.
load_dotenv(os.environ.get("ENV_FILE") or BASE_DIR / ".env", override=False)

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY") or ""
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is required when DEBUG is off: set it in the environment or in .env "
            "(cp .env.example .env), or DEBUG=1 on a development checkout."
        )
    SECRET_KEY = "insecure-development-key"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "axes",
    "csp",
    "django_filters",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_tasks",
    "django_tasks_db",
    "readerstudy",
    "readerstudy.predictions",
    "readerstudy.design",
    "annotation",
    "analysis",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "readerstudy.platform.middleware.RejectNulMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "readerstudy.platform.middleware.SessionEndedMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "axes.middleware.AxesMiddleware",
    "readerstudy.platform.middleware.TryLaterMiddleware",
]

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Login throttling: this many failed logins for one username lock it for the cool-off time.
AXES_ENABLED = env_bool("AXES_ENABLED", True)
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 15, minimum=1))
# Lock the account, not the address: the residents of one hospital usually sign in from one
# NAT address, and one person's typos must not lock out the whole reading room. axes warns
# (W006) that this allows spraying many accounts from one address; a study has tens of
# accounts, each still capped at LOGIN_FAILURE_LIMIT tries per lockout period.
AXES_LOCKOUT_PARAMETERS = ["username"]
SILENCED_SYSTEM_CHECKS = ["axes.W006"]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked.html"
AXES_VERBOSE = False
# What axes records is cut to its column (a longer name would fail the write on PostgreSQL).
AXES_USERNAME_CALLABLE = "readerstudy.platform.login_limits.axes_username"

ROOT_URLCONF = "readerstudy.config.urls"
WSGI_APPLICATION = "readerstudy.config.wsgi.application"

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

_database_url = env_str("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}"
try:
    DATABASES = {"default": dj_database_url.parse(_database_url, conn_max_age=60)}
except ValueError as exc:
    raise ImproperlyConfigured(f"DATABASE_URL is not a usable database URL: {exc}") from exc
# Background work (imports, image derivation, the analysis and its downloads) runs as tasks
# of Django's Tasks API (the `django-tasks` backport: Django 5.2 LTS has no `django.tasks`)
# in worker processes, never in a web worker. TASKS_URL picks the engine: db:// (default:
# this database, `manage.py db_worker`), redis://host:6379/0 (RQ, `manage.py rqworker
# --with-scheduler`) or immediate:// (in the caller; tests).
_tasks_backend, RQ_QUEUES = env_tasks("TASKS_URL", "db://")
TASKS = {"default": _tasks_backend}
TASKS_IN_WORKER = _tasks_backend["BACKEND"] != IMMEDIATE_TASKS
if RQ_QUEUES:
    INSTALLED_APPS.append("django_rq")
# The analysis (tables, figures, the export ZIP) is computed once per data version and kept
# in this cache; workers compute it and web processes serve it, so with a task worker the
# cache must be shared: file:// (one machine) or redis:// (several). Default: a folder here.
_cache_default = f"file://{BASE_DIR / 'var' / 'cache'}" if TASKS_IN_WORKER else "locmem://"
CACHES = {"default": env_cache("CACHE_URL", _cache_default)}
if TASKS_IN_WORKER and CACHES["default"]["BACKEND"] == LOCMEM_CACHE:
    raise ImproperlyConfigured(
        "CACHE_URL=locmem:// is private to one process, but tasks run in a worker process: "
        "use file:///absolute/dir or redis://host:6379/1 (or TASKS_URL=immediate://)."
    )
# Draw the analysis downloads (PNG, PDF, XLSX, the ZIP) in the analysis task, after the
# tables and the page's figures, so the ZIP is ready when asked for (analysis.preparation).
ANALYSIS_PREPARE_DOWNLOADS = env_bool("ANALYSIS_PREPARE_DOWNLOADS", True)
# After answers (or exclusions, predictions, names) change, the analysis of the study is
# computed again this many seconds later (debounced: one run per quiet spell), so a PI finds
# it ready. Needs a worker backend (db:// or redis://).
ANALYSIS_REFRESH_DELAY = env_int("ANALYSIS_REFRESH_DELAY", 20, minimum=1)
# A running task reports at least this often; one silent for longer (its worker was killed)
# is run again by the next request that looks at it.
TASK_STALE_SECONDS = env_int("TASK_STALE_SECONDS", 120, minimum=5)
# While there is background work, a worker sweeps the job table this often: silent jobs run
# again (at most TASK_MAX_ATTEMPTS attempts, then failed in words), and finished jobs older
# than TASK_RETENTION_DAYS are deleted (readerstudy.jobs.jobs_sweep; also `manage.py
# jobs_sweep`).
TASK_SWEEP_SECONDS = env_int("TASK_SWEEP_SECONDS", 60, minimum=1)
TASK_MAX_ATTEMPTS = env_int("TASK_MAX_ATTEMPTS", 3, minimum=1)
TASK_RETENTION_DAYS = env_int("TASK_RETENTION_DAYS", 30, minimum=1)
# Work one person may queue: at most TASK_USER_LIMIT new jobs (analyses, study creations) in
# any TASK_USER_WINDOW seconds; more is refused (429) saying when to ask again
# (readerstudy.jobs). A shared queue's workers are everyone's.
TASK_USER_LIMIT = env_int("TASK_USER_LIMIT", 20, minimum=1)
TASK_USER_WINDOW = env_int("TASK_USER_WINDOW", 600, minimum=1)

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several readers write at once; wait for the lock instead of failing, and take the
    # write lock at BEGIN so a read-then-write transaction cannot deadlock.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
    # Not a rule: the hook that ends API tokens whenever a password changes, however.
    {"NAME": "readerstudy.platform.password_hooks.EndApiTokensOnPasswordChange"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
# Pages a lower layer links to that a higher layer serves: the composition root names them, and
# readerstudy and annotation reach them through `readerstudy.platform.links` (`site_link`), never by
# their URL names (tools/check_url_layers.py, run by `make lint`, fails on such a link).
SITE_LINKS = {
    "home": "home",  # my studies (annotation)
    "pi-home": "pi-dashboard",  # a PI's study page (annotation)
    "corrections": "corrections",  # a study's proposed corrections to its key (annotation)
    "expert-home": "expert-queue",  # an expert's review queue (analysis)
    "expert-next": "expert-next",  # the next question to review (analysis)
    "expert-evidence": "expert-evidence",  # a question's evidence panel (analysis)
    "analysis": "analysis",  # the PI's analysis page (analysis)
    "reader-results": "reader-results",  # a reader's debrief of a study (analysis)
    "my-progress": "my-progress",  # a reader's progress over time (analysis)
    "programme": "programme",  # a PI's residents' progress (analysis)
}
LOGOUT_REDIRECT_URL = "login"
# A dark page in plain words for people; JSON with X-CSRF-Failed for the page's own script.
CSRF_FAILURE_VIEW = "readerstudy.platform.errors.csrf_failure"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT") or BASE_DIR / "staticfiles")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}
WHITENOISE_USE_FINDERS = True
WHITENOISE_MANIFEST_STRICT = False

MEDIA_URL = "media/"
MEDIA_ROOT = Path(env_str("MEDIA_ROOT") or BASE_DIR / "media").resolve()

# Derived display images: longest side in pixels, thumbnail longest side.
DISPLAY_MAX_SIZE = env_int("DISPLAY_MAX_SIZE", 2048, minimum=256)
THUMBNAIL_MAX_SIZE = env_int("THUMBNAIL_MAX_SIZE", 256, minimum=32)
# Largest source image accepted (width x height x frames), checked at import from the header:
# a small compressed file can decode to gigabytes. Also Pillow's decompression-bomb limit.
MAX_IMAGE_PIXELS = env_int("MAX_IMAGE_PIXELS", 100_000_000, minimum=1)
# Images from a DICOMweb server (PACS). The command line names the server per import
# (`--dicomweb URL`); the PI's "new study" page can only use the one configured here, with the
# credentials from the environment, so a web user cannot make the server fetch other URLs.
DICOMWEB_URL = env_str("DICOMWEB_URL") or ""
DICOMWEB_USER = env_str("DICOMWEB_USER") or ""
DICOMWEB_PASSWORD = env_str("DICOMWEB_PASSWORD") or ""
DICOMWEB_TOKEN = env_str("DICOMWEB_TOKEN") or ""
DICOMWEB_TIMEOUT = env_int("DICOMWEB_TIMEOUT", 30, minimum=1)  # seconds per connect / read
DICOMWEB_RETRIES = env_int("DICOMWEB_RETRIES", 3, minimum=0)  # with exponential backoff
DICOMWEB_BACKOFF = env_int("DICOMWEB_BACKOFF_MS", 500, minimum=0) / 1000
DICOMWEB_MAX_INSTANCE_BYTES = env_int("DICOMWEB_MAX_INSTANCE_BYTES", 512 * 1024 * 1024, minimum=1)
# Folder on the server whose files a question bank uploaded on the "new study" page may name
# (image paths are relative to it and cannot leave it). Empty: uploads cannot use files.
IMPORT_IMAGES_ROOT = env_str("IMPORT_IMAGES_ROOT") or ""
# Largest question bank (.csv/.xlsx) accepted by upload, in bytes.
QUESTION_BANK_MAX_BYTES = env_int("QUESTION_BANK_MAX_BYTES", 20 * 1024 * 1024, minimum=1)

# Upper bound for the time a reader may spend on one case (ms); longer is clipped, as a tab
# left open overnight is not reading time.
MAX_CASE_TIME_MS = env_int("MAX_CASE_TIME_MS", 30 * 60 * 1000, minimum=1000)
# Reading policy. Answer keys and Enter do nothing on a case until its image has been on
# screen this long (ms): a burst of keys meant for the previous case cannot answer one nobody
# saw. The page reads it from the case's markup.
READER_MIN_DWELL_MS = env_int("READER_MIN_DWELL_MS", 400, minimum=0)
# Answers given in less visible time than this (ms) are flagged as too fast to be a reading:
# counted on the PI dashboard, marked in the answers export and the analysis flow table.
FAST_ANSWER_MS = env_int("FAST_ANSWER_MS", 2000, minimum=0)
# Pacing: the time a case is expected to take (ms) before anyone has answered in a study
# (the instructions' expected duration); once readers have answered, their own median is used.
READER_EXPECTED_CASE_MS = env_int("READER_EXPECTED_CASE_MS", 40_000, minimum=1000)

# One-time sign-in links a PI hands to people brought in from the dashboard: valid this many
# days, once. They are e-mailed when e-mail is configured (EMAIL_HOST; the demo prints them to
# the console), and always shown to the PI once.
INVITATION_TTL_DAYS = env_int("INVITATION_TTL_DAYS", 7, minimum=1)
EMAIL_HOST = env_str("EMAIL_HOST") or ""
EMAIL_PORT = env_int("EMAIL_PORT", 587, minimum=1)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER") or ""
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD") or ""
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL") or "readerstudy@localhost"
if EMAIL_HOST:
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
elif DEBUG:  # a file per e-mail under var/mail, one line on the console (readerstudy.platform.mail)
    EMAIL_BACKEND = "readerstudy.platform.mail.DemoEmailBackend"
    EMAIL_FILE_PATH = env_str("EMAIL_FILE_PATH") or str(BASE_DIR / "var" / "mail")
else:
    EMAIL_BACKEND = "django.core.mail.backends.dummy.EmailBackend"
INVITATION_EMAIL = bool(EMAIL_HOST) or DEBUG

# API tokens expire this many hours after they were issued; 0 keeps them until revoked (a
# password change revokes them, and so can their owner on the account page).
API_TOKEN_TTL_HOURS = env_int("API_TOKEN_TTL_HOURS", 0, minimum=0)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "readerstudy.platform.token_auth.ExpiringTokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # JSON only: the interactive API is the Swagger UI at /api/docs/. DRF's browsable renderer
    # builds forms from querysets our views do not declare (they authorise through
    # study_for_user) and would answer `Accept: text/html` with a 500; without it, a 406.
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # Depth-bounded and text-checked JSON (readerstudy/platform/json_input.py): `"[" * 5000`
    # is a 400.
    "DEFAULT_PARSER_CLASSES": [
        "readerstudy.platform.json_input.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_METADATA_CLASS": "readerstudy.platform.api_metadata.ViewMetadata",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_THROTTLE_CLASSES": ["rest_framework.throttling.UserRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {"user": env_str("API_USER_RATE") or "1200/min"},
    "EXCEPTION_HANDLER": "readerstudy.platform.api_errors.exception_handler",
}
# The OpenAPI schema and /api/docs/ for anonymous visitors too (readerstudy/platform/api_docs.py).
API_DOCS_PUBLIC = env_bool("API_DOCS_PUBLIC", False)
SPECTACULAR_SETTINGS = {
    "TITLE": "ReaderStudy API",
    "DESCRIPTION": "Reader studies on chest X-ray MCQs (ReXVQA) beside AI models.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # The four option letters are one choice set wherever a field takes one (an answer's
    # choice, a proposed key): one name in the schema.
    "ENUM_NAME_OVERRIDES": {"LetterEnum": "readerstudy.vocabulary.Letter"},
}

# Security: secure by default when DEBUG is off.
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
# One hour by default once DEBUG is off; raise it (e.g. 31536000) once HTTPS is known to work.
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 3600, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
if env_bool("BEHIND_TLS_PROXY", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Only our own scripts run: no inline script, no eval, no third-party origin.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, UNSAFE_INLINE],
        "img-src": [SELF, "data:", "blob:"],
        "connect-src": [SELF],
        "font-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 10 * 1024 * 1024)
# Prediction files uploaded through the API (CSV or JSON), in bytes.
PREDICTION_UPLOAD_MAX_BYTES = env_int("PREDICTION_UPLOAD_MAX_BYTES", 50 * 1024 * 1024, minimum=1)

# The console: one line per event, a handled error included (its exception named, not its
# traceback); the log file keeps every record with its traceback (readerstudy.platform.logs).
# LOG_LEVEL=DEBUG puts the tracebacks on the console too; LOG_FILE="" (or "-") keeps no file.
LOG_LEVEL = (env_str("LOG_LEVEL") or "WARNING").upper()
_log_file = env_str("LOG_FILE")
if _log_file is None:
    LOG_FILE = str(BASE_DIR / "var" / "log" / "readerstudy.log")
else:
    LOG_FILE = "" if _log_file.strip() in ("", "-") else _log_file.strip()
if LOG_FILE:
    Path(LOG_FILE).parent.mkdir(parents=True, exist_ok=True)
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # Sign-in links carry their secret in the path: no log line says it (log_redaction).
    "filters": {"redact_secrets": {"()": "readerstudy.platform.log_redaction.RedactSecretsFilter"}},
    "formatters": {
        "line": {
            "()": "readerstudy.platform.logs.OneLineFormatter",
            "format": "%(levelname)s %(name)s: %(message)s",
            "where": LOG_FILE,
        },
        "full": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
        "django.server": {
            "()": "django.utils.log.ServerFormatter",
            "format": "[{server_time}] {message}",
            "style": "{",
        },
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "full" if LOG_LEVEL == "DEBUG" else "line",
            "filters": ["redact_secrets"],
        },
        # runserver's request log, as Django's default but without the links' secrets.
        "django.server": {
            "level": "INFO",
            "class": "logging.StreamHandler",
            "formatter": "django.server",
            "filters": ["redact_secrets"],
        },
        **(
            {
                "file": {
                    "class": "logging.handlers.RotatingFileHandler",
                    "filename": LOG_FILE,
                    "maxBytes": 5 * 1024 * 1024,
                    "backupCount": 3,
                    "formatter": "full",
                    "filters": ["redact_secrets"],
                    "delay": True,
                }
            }
            if LOG_FILE
            else {}
        ),
    },
    "root": {"handlers": ["console", *(["file"] if LOG_FILE else [])], "level": LOG_LEVEL},
    "loggers": {
        # One line per analysis computed and per figure drawn, naming the study and data
        # version: how an operator sees work done twice (benchmarks/scale counts them).
        "analysis.cache": {"level": "INFO"},
        "readerstudy.platform.mail": {"level": "INFO"},  # one line per e-mail the demo writes
        # Django's own console handler (DEBUG) would print its records a second time, whole:
        # they reach the console handler above through the root instead.
        "django": {"handlers": [], "level": "INFO"},
        "django.server": {"handlers": ["django.server"], "level": "INFO", "propagate": False},
    },
}
