"""Settings for the test suite: the embedded default on a throwaway SQLite file."""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("REVIEWCONSOLE_VAR_DIR", tempfile.mkdtemp(prefix="reviewconsole-test-"))

from .embedded import *  # noqa: E402, F403
from .embedded import DATABASES, VAR_DIR  # noqa: E402

DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test.sqlite3")}
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
