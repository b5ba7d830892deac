"""The one-command default: SQLite in ``var/``, in-memory channel layer, in-process task worker.

Secrets come from the environment when set; otherwise a random key is generated once and kept in
``var/secret_key`` so sessions survive restarts. Not for production (see ``production.py``).
"""

from __future__ import annotations

import os
import secrets

from . import env
from .base import *  # noqa: F403
from .base import VAR_DIR

VAR_DIR.mkdir(parents=True, exist_ok=True)


def _secret_key() -> str:
    if os.environ.get("DJANGO_SECRET_KEY"):
        return os.environ["DJANGO_SECRET_KEY"]
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50), encoding="utf-8")
        path.chmod(0o600)
    return path.read_text(encoding="utf-8").strip()


SECRET_KEY = _secret_key()
DEBUG = os.environ.get("DJANGO_DEBUG", "") == "1"
# Loopback by default; `serve --host <address>` adds the address it binds. Others from the environment.
ALLOWED_HOSTS = ["localhost", "127.0.0.1", "[::1]"] + [
    h for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "").split(",") if h
]
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o]

DATABASES = {
    "default": env.database(
        {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.environ.get("REVIEWCONSOLE_SQLITE_PATH", str(VAR_DIR / "reviewconsole.sqlite3")),
            "OPTIONS": {
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    )
}
CHANNEL_LAYERS = env.channel_layers(CHANNEL_LAYERS)  # noqa: F405
TASKS = env.tasks(TASKS)  # noqa: F405

# Email (the inbox's new-item notifications) goes to the console unless a backend is named (env.py).
MAILERS = env.mailers("django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = os.environ.get("REVIEWCONSOLE_FROM_EMAIL", "reviewconsole@localhost")
