"""Settings shared by every deployment; the modules next to this one pick the parts that differ."""

from __future__ import annotations

import os
from pathlib import Path

from django.utils.csp import CSP

from . import env

BASE_DIR = Path(__file__).resolve().parents[2]
VAR_DIR = Path(os.environ.get("REVIEWCONSOLE_VAR_DIR", BASE_DIR / "var"))

INSTALLED_APPS = [
    "daphne",
    "reviewconsole.admin_site.ConsoleAdminConfig",  # django.contrib.admin, ordered for auditors
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_tasks_db",
    "ninja",
    "axes",
    "reviewconsole.preferences",
    "reviewconsole.console",
    "reviewconsole.workflows",
    "reviewconsole.workflow_sessions",
    "reviewconsole.policies",
    "reviewconsole.inbox",
    "reviewconsole.hooks",
    "reviewconsole.api",
    "reviewconsole.audit",
    "reviewconsole.outbound",
    "reviewconsole.agui",
]

MIDDLEWARE = [
    # First: counts the requests being served, which `serve` lets finish before it stops.
    "reviewconsole.in_flight.InFlightMiddleware",
    # A JSON door's 405 (require_POST, django-ninja) in the one JSON error format, with its Allow.
    "reviewconsole.error_pages.MethodNotAllowedMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # A NUL in the URL or a header is a 400 here, not a 500 at the database (PostgreSQL).
    "reviewconsole.console.request_guard.RefuseNulMiddleware",
    # A number too large for the database or a date (an admin filter) is a 400, not a 500.
    "reviewconsole.console.request_guard.RefuseOverflowMiddleware",
    # A view's database outage or lock wait becomes a 503 / 409 with Retry-After, not a 500.
    "reviewconsole.unavailable.DatabaseErrorMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # The person's time zone (their preference, else their browser's) for the whole request.
    "reviewconsole.preferences.middleware.TimeZoneMiddleware",
    # ... and locale (picked, else the browser's Accept-Language): how money and numbers are written.
    "reviewconsole.preferences.middleware.LocaleMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "reviewconsole.audit.middleware.AuditContextMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into its lockout response.
    "axes.middleware.AxesMiddleware",
]

# django-axes first: it refuses a locked-out login before any password is checked.
AUTHENTICATION_BACKENDS = [
    "reviewconsole.audit.backends.LoginThrottleBackend",
    "django.contrib.auth.backends.ModelBackend",
]

ROOT_URLCONF = "reviewconsole.urls"
ASGI_APPLICATION = "reviewconsole.asgi.application"

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
                "reviewconsole.console.context_processors.console",
                "reviewconsole.preferences.context_processors.preferences",
            ],
        },
    }
]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS: list[Path | tuple[str, Path]] = [BASE_DIR / "static"]
# The workflow pictures' script (`npm ci` puts mermaid in node_modules/), as static/vendor/mermaid/.
_MERMAID_DIST = BASE_DIR / "node_modules" / "mermaid" / "dist"
if _MERMAID_DIST.is_dir():
    STATICFILES_DIRS.append(("vendor/mermaid", _MERMAID_DIST))
# axe-core (a dev dependency: the browser tests' accessibility check, tests/browser/test_accessibility.py).
_AXE = BASE_DIR / "node_modules" / "axe-core"
if _AXE.is_dir():
    STATICFILES_DIRS.append(("vendor/axe-core", _AXE))
STATIC_ROOT = VAR_DIR / "staticfiles"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Security headers every deployment sends (production.py adds HTTPS-only ones).
# Content Security Policy (Django's own): scripts, styles and connections only from this origin,
# so markup that slipped into a page could not run a script or load one from elsewhere.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    # Only the console itself may frame its pages: the two-pane inbox shows an item in a frame.
    "frame-ancestors": [CSP.SELF],
    "form-action": [CSP.SELF],
}
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# Same origin, not DENY: the two-pane inbox shows an item's page in a frame of its own page. Other
# sites still cannot frame the console (as CSP's frame-ancestors 'self' says), which is what
# Django's check W019 (it asks for DENY) protects; it is silenced for that reason.
X_FRAME_OPTIONS = "SAMEORIGIN"
SILENCED_SYSTEM_CHECKS = ["security.W019"]
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_AGE = int(os.environ.get("REVIEWCONSOLE_SESSION_SECONDS", str(8 * 3600)))  # a working day
CSRF_COOKIE_SAMESITE = "Lax"

# Login throttling (django-axes): 5 failures for one username from one address lock that pair
# out for 15 minutes (each later attempt answered 429, unchecked); a success resets the count.
# The lockout page is the login page's (audit/lockout.py).
AXES_FAILURE_LIMIT = 5
AXES_COOLOFF_TIME = 0.25  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_HTTP_RESPONSE_CODE = 429
AXES_LOCKOUT_CALLABLE = "reviewconsole.audit.lockout.lockout_response"
AXES_VERBOSE = False

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "inbox:index"
LOGOUT_REDIRECT_URL = "login"

TASKS = {
    "default": {
        "BACKEND": "django_tasks_db.DatabaseBackend",
        # Session runs on "default", outbound deliveries on "outbound" (served by threads of their own).
        "QUEUES": ["default", "outbound"],
    }
}

CHANNEL_LAYERS = {"default": {"BACKEND": "reviewconsole.live_layer.InMemoryChannelLayer"}}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "loggers": {
        "engine": {"handlers": ["console"], "level": "INFO"},
        "reviewconsole": {"handlers": ["console"], "level": "INFO"},
        "django_tasks_db": {"handlers": ["console"], "level": "WARNING"},
        # Unhandled errors in views (500s) with their traceback, also with DEBUG off (Django's
        # own console handler only logs with DEBUG on); the page stays generic.
        "django.request": {"handlers": ["console"], "level": "ERROR", "propagate": False},
    },
}

REVIEWCONSOLE = {
    # Dotted paths of the modules whose WORKFLOWS list registers workflows (plus those named by
    # entry points of the group "reviewconsole.workflows"). None here: embedded.py adds the demo.
    "WORKFLOWS": env.workflow_modules([]),
    # The default model: a name in MODELS ("offline": deterministic, no network; "openai": an
    # OpenAI-compatible server). A workflow that names none uses it (WorkflowSpec.model).
    "MODEL": os.environ.get("REVIEWCONSOLE_MODEL", "offline"),
    # Named model configurations (README "Use a real LLM"; reviewconsole/workflow_sessions/llm.py).
    # API_KEY_ENV names the environment variable holding the key: the key itself is never a setting.
    "MODELS": {
        "offline": {"BACKEND": "offline"},
        "openai": {
            "BACKEND": "openai",
            "BASE_URL": os.environ.get("OPENAI_BASE_URL", ""),
            # A local server (a loopback OPENAI_BASE_URL) needs no key: with OPENAI_API_KEY unset
            # none is sent and `check` does not warn (reviewconsole.W101); set, it is sent.
            "API_KEY_ENV": (
                ""
                if env.is_local_url(os.environ.get("OPENAI_BASE_URL", "")) and not os.environ.get("OPENAI_API_KEY")
                else "OPENAI_API_KEY"
            ),
            "MODEL": os.environ.get("OPENAI_MODEL", "") or "gpt-4o-mini",
            "TEMPERATURE": env.number("OPENAI_TEMPERATURE", None, float),
            "TIMEOUT": env.number("OPENAI_TIMEOUT", 60.0, float),
            "RETRIES": env.number("OPENAI_RETRIES", 2, int),
        },
    },
    # Back-off between retries of a failed model call, in seconds: the first delay, its growth
    # factor, the longest delay, and the longest Retry-After a server may ask for.
    "MODEL_BACKOFF": {"INITIAL": 0.5, "MULTIPLIER": 2.0, "MAX": 8.0, "MAX_RETRY_AFTER": 60.0},
    # Seconds a run holds its session's lease without committing before another worker may take it.
    "LEASE_TTL": float(os.environ.get("REVIEWCONSOLE_LEASE_TTL", "60")),
    # The queue that receives items whose workflow names no queue.
    "TRIAGE_QUEUE": "triage",
    # Largest accepted webhook body, in bytes.
    "WEBHOOK_MAX_BYTES": int(os.environ.get("REVIEWCONSOLE_WEBHOOK_MAX_BYTES", str(1024 * 1024))),
    # Webhook deliveries accepted per endpoint per minute unless the endpoint sets its own (429 above).
    "WEBHOOK_RATE_LIMIT": int(os.environ.get("REVIEWCONSOLE_WEBHOOK_RATE_LIMIT", "120")),
    # Largest webhook body kept on its delivery for replay, in bytes (longer bodies are not kept).
    "WEBHOOK_KEEP_BYTES": int(os.environ.get("REVIEWCONSOLE_WEBHOOK_KEEP_BYTES", str(256 * 1024))),
    # Outbound events: attempts per message, first back-off (seconds, doubled each retry), timeout.
    # Outbound events to loopback, link-local or private addresses (refused unless set; see outbound/addresses.py).
    "OUTBOUND_ALLOW_PRIVATE": os.environ.get("REVIEWCONSOLE_OUTBOUND_ALLOW_PRIVATE", "") in ("1", "true", "yes"),
    "OUTBOUND_MAX_ATTEMPTS": int(os.environ.get("REVIEWCONSOLE_OUTBOUND_MAX_ATTEMPTS", "8")),
    "OUTBOUND_BACKOFF": float(os.environ.get("REVIEWCONSOLE_OUTBOUND_BACKOFF", "10")),
    "OUTBOUND_TIMEOUT": float(os.environ.get("REVIEWCONSOLE_OUTBOUND_TIMEOUT", "10")),
    # Tasks left RUNNING by a dead worker: seconds a worker's heartbeat stays good (it beats every
    # third of it) before its tasks are queued again, and how many claims a task gets before it is
    # failed instead (a task that kills its worker every time). See console/task_recovery.py.
    "TASK_LEASE": float(os.environ.get("REVIEWCONSOLE_TASK_LEASE", "60")),
    "TASK_MAX_CLAIMS": int(os.environ.get("REVIEWCONSOLE_TASK_MAX_CLAIMS", "5")),
    # On PostgreSQL a task's enqueue is announced with NOTIFY on this channel and every worker
    # process LISTENs to it, so its threads poll only every TASK_POLL_SECONDS (a safety net: tasks
    # come due, a notification lost while reconnecting). An empty channel turns it off: the
    # threads poll every `--interval` as on SQLite. See console/task_notify.py.
    "TASK_NOTIFY_CHANNEL": os.environ.get("REVIEWCONSOLE_TASK_NOTIFY_CHANNEL", "reviewconsole_tasks"),
    "TASK_POLL_SECONDS": float(os.environ.get("REVIEWCONSOLE_TASK_POLL_SECONDS", "2")),
}
