"""Settings for the test suite: the embedded default on a throwaway SQLite file.

Runs go through Django's ``ImmediateBackend``: a ``run_session`` task enqueued when a
transaction commits runs at once, on the committing thread, so a test sees the session's next
state as soon as the door (webhook, decision) returns. Tests that use the ``db`` fixture (one
transaction per test) trigger those commit hooks with ``django_capture_on_commit_callbacks``;
``transaction=True`` tests commit for real. The database-backed worker of the embedded default is
exercised by the browser test, which runs ``manage.py serve`` as a subprocess.
"""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("REVIEWCONSOLE_VAR_DIR", tempfile.mkdtemp(prefix="reviewconsole-test-"))

from .embedded import *  # noqa: F403
from .embedded import DATABASES, VAR_DIR, private_file

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["TEST"] = {"NAME": private_file(VAR_DIR / "test.sqlite3")}
# The outbound tests' receiver listens on loopback.
REVIEWCONSOLE = {**REVIEWCONSOLE, "OUTBOUND_ALLOW_PRIVATE": True}  # noqa: F405
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
TASKS = {"default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend", "QUEUES": ["default", "outbound"]}}
ALLOWED_HOSTS = [*ALLOWED_HOSTS, "testserver"]  # noqa: F405 (Django's test client and Channels' communicator)
