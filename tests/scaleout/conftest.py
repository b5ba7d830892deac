"""Scale-out tests (marker ``scaleout``), in two kinds.

- In-process tests run on the database of the test run: the embedded SQLite in ``./test``, and
  PostgreSQL when ``DATABASE_URL`` names one (``.ci/run`` runs ``./test -m scaleout`` that way).
  Those that only mean something on PostgreSQL (row locks) use the ``postgres`` fixture.
- Stack tests use :func:`stack`: real processes on PostgreSQL and Redis behind nginx
  (``tests/scaleout/stack.py``), started once per test session. They need ``DATABASE_URL``
  (PostgreSQL, a role with CREATEDB) and ``REDIS_URL``.

Without those servers these tests skip, unless ``REVIEWCONSOLE_SCALEOUT_REQUIRED=1`` (set by
``.ci/run``), where a missing server fails the run instead.
"""

from __future__ import annotations

import os

import pytest

from tests.inbox.smtp_receiver import SmtpReceiver
from tests.scaleout.stack import Stack


def _missing(reason: str) -> None:
    if os.environ.get("REVIEWCONSOLE_SCALEOUT_REQUIRED") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def stack_smtp():
    """The SMTP server on loopback the stack's notification mails go to (see ``smtp_receiver.py``)."""
    server = SmtpReceiver().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def stack_servers():
    """Skip (or fail in CI) unless ``DATABASE_URL`` names PostgreSQL and ``REDIS_URL`` is set: what
    a stack needs (for tests that start a stack of their own)."""
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        _missing("scale-out stack tests need DATABASE_URL (PostgreSQL) and REDIS_URL; .ci/run sets them")
    if not os.environ.get("REDIS_URL"):
        _missing("scale-out stack tests need REDIS_URL; .ci/run sets it")


@pytest.fixture(scope="session")
def stack(tmp_path_factory, stack_smtp, stack_servers):
    """The scale-out stack (2 Daphne, 2 workers of 2 threads, nginx), lease TTL 2 s, mail to :func:`stack_smtp`."""
    mail = {
        "REVIEWCONSOLE_EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "REVIEWCONSOLE_EMAIL_HOST": "127.0.0.1",
        "REVIEWCONSOLE_EMAIL_PORT": str(stack_smtp.port),
    }
    running = Stack(tmp_path_factory.mktemp("stack"), extra_env=mail).start()
    yield running
    running.stop()


@pytest.fixture
def healthy(stack):
    """The stack with every process up again (a test before may have killed some)."""
    for proc in [*stack.webs, *stack.workers]:
        if not proc.alive():
            stack.launch(proc)
    for proc in [*stack.webs, *stack.workers]:
        stack.wait_ready(proc)
    return stack


@pytest.fixture
def postgres(db):
    """Skip (or fail in CI) unless the test run's own database is PostgreSQL."""
    from django.db import connection

    if connection.vendor != "postgresql":
        _missing("needs PostgreSQL: run with DATABASE_URL=postgres://…")
