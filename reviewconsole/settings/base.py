"""Settings shared by every deployment; the modules next to this one pick the parts that differ."""

from __future__ import annotations

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[2]
VAR_DIR = Path(os.environ.get("REVIEWCONSOLE_VAR_DIR", BASE_DIR / "var"))

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_tasks_db",
    "reviewconsole.console",
    "reviewconsole.workflow_sessions",
    "reviewconsole.inbox",
    "reviewconsole.hooks",
    "reviewconsole.api",
    "reviewconsole.audit",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
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
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "inbox:index"
LOGOUT_REDIRECT_URL = "login"

TASKS = {
    "default": {
        "BACKEND": "django_tasks_db.DatabaseBackend",
        "QUEUES": ["default"],
    }
}

CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "loggers": {
        "engine": {"handlers": ["console"], "level": "INFO"},
        "reviewconsole": {"handlers": ["console"], "level": "INFO"},
        "django_tasks_db": {"handlers": ["console"], "level": "WARNING"},
    },
}

REVIEWCONSOLE = {
    # Which model agents use: "offline" (deterministic, no network) or "openai" (an
    # OpenAI-compatible server; see OPENAI_* below).
    "MODEL": os.environ.get("REVIEWCONSOLE_MODEL", "offline"),
    "OPENAI_BASE_URL": os.environ.get("OPENAI_BASE_URL", ""),
    "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY", ""),
    "OPENAI_MODEL": os.environ.get("OPENAI_MODEL", ""),
    # Seconds a run holds its session's lease without committing before another worker may take it.
    "LEASE_TTL": float(os.environ.get("REVIEWCONSOLE_LEASE_TTL", "60")),
    # The queue that receives items whose workflow names no queue.
    "TRIAGE_QUEUE": "triage",
    # Largest accepted webhook body, in bytes.
    "WEBHOOK_MAX_BYTES": int(os.environ.get("REVIEWCONSOLE_WEBHOOK_MAX_BYTES", str(1024 * 1024))),
}
