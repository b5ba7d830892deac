"""Production: everything secret or site-specific comes from the environment, HTTPS only.

Required: ``DJANGO_SECRET_KEY`` (50+ characters), ``DJANGO_ALLOWED_HOSTS`` (comma-separated) and
``DATABASE_URL``. Optional: ``DJANGO_CSRF_TRUSTED_ORIGINS``, ``REDIS_URL``,
``REVIEWCONSOLE_TASK_BACKEND`` and ``REVIEWCONSOLE_EMAIL_*`` (see ``env.py``),
``DJANGO_SECURE_PROXY_SSL_HEADER=1`` behind a proxy that sets ``X-Forwarded-Proto``,
``DJANGO_HSTS_SECONDS`` (default one year),
``REVIEWCONSOLE_WORKFLOWS`` (the workflow modules, comma-separated: none by default, so the demo
is not on unless named, as ``reviewconsole.demo``; installed distributions' entry points add theirs).
``manage.py check --deploy`` passes with these settings (a test runs it).
"""

from __future__ import annotations

import os

from django.core.exceptions import ImproperlyConfigured

from . import env
from .base import *  # noqa: F403
from .base import AUTH_PASSWORD_VALIDATORS, CHANNEL_LAYERS, TASKS


def _required(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise ImproperlyConfigured(f"Set {name} in the environment (production settings read it from there only).")
    return value


SECRET_KEY = _required("DJANGO_SECRET_KEY")
if len(SECRET_KEY) < 50:
    raise ImproperlyConfigured("DJANGO_SECRET_KEY must be at least 50 characters.")
DEBUG = False
ALLOWED_HOSTS = [h.strip() for h in _required("DJANGO_ALLOWED_HOSTS").split(",") if h.strip()]
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o]

_required("DATABASE_URL")
DATABASES = {"default": env.database({})}
CHANNEL_LAYERS = env.channel_layers(CHANNEL_LAYERS)
TASKS = env.tasks(TASKS)
MAILERS = env.mailers("django.core.mail.backends.smtp.EmailBackend")  # SMTP on localhost:25 unless set (env.py)

# HTTPS only: redirect plain HTTP, secure cookies, HSTS.
SECURE_SSL_REDIRECT = True
if os.environ.get("DJANGO_SECURE_PROXY_SSL_HEADER") == "1":
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_HSTS_SECONDS", str(365 * 24 * 3600)))
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"

# Longer passwords than Django's default of 8.
AUTH_PASSWORD_VALIDATORS = [
    {**v, "OPTIONS": {"min_length": 12}} if v["NAME"].endswith("MinimumLengthValidator") else v
    for v in AUTH_PASSWORD_VALIDATORS
]
