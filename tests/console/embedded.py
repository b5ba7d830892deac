"""The embedded default as real processes, for ``kill -9`` tests: ``manage.py serve`` on its own
SQLite database in a temporary ``var/``, started, killed and started again.

:class:`EmbeddedConsole` runs ``manage.py`` commands with that environment (:meth:`manage`,
:meth:`shell`), starts ``serve`` on a free loopback port (:meth:`start`, which waits for its
ready line), kills it as ``kill -9`` does (:meth:`kill`) and reads its database with
:mod:`sqlite3` (:meth:`sql`, WAL mode lets it read while the console writes). The task lease is
short (``REVIEWCONSOLE_TASK_LEASE``, 1 s by default) so a dead worker's tasks come back quickly.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.scaleout.stack_parts import free_port, wait_for

ROOT = Path(__file__).resolve().parents[2]
READY = "Console running at"
START_DEADLINE = 60.0  # seconds serve may take to migrate and come up


class EmbeddedConsole:
    """``manage.py serve`` on SQLite under ``directory``; ``env`` adds to (or overrides) its environment."""

    def __init__(self, directory: Path, *, task_lease: float = 1.0, env: dict[str, str] | None = None) -> None:
        self.dir = directory
        self.var = directory / "var"
        self.var.mkdir(parents=True, exist_ok=True)
        self.log = directory / "serve.log"
        self.port = free_port()
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "reviewconsole.settings.embedded",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
            "REVIEWCONSOLE_VAR_DIR": str(self.var),
            "REVIEWCONSOLE_TASK_LEASE": str(task_lease),
            "REVIEWCONSOLE_OUTBOUND_ALLOW_PRIVATE": "1",  # the tests' receivers listen on loopback
            "PYTHONUNBUFFERED": "1",
            **(env or {}),
        }
        for name in ("DATABASE_URL", "REDIS_URL", "REVIEWCONSOLE_TASK_BACKEND", "REVIEWCONSOLE_SQLITE_PATH"):
            self.env.pop(name, None)
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def manage(self, *args: str, timeout: float = 120) -> str:
        """Run ``manage.py`` with the console's environment; its output (raises when it fails)."""
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode:
            raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
        return done.stdout

    def shell(self, code: str) -> str:
        return self.manage("shell", "-c", code)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, *, migrate: bool = True) -> EmbeddedConsole:
        """Start ``serve`` (one worker thread; ``--no-migrate`` unless ``migrate``) and wait for its ready line."""
        self.starts += 1
        with self.log.open("ab") as log:
            log.write(f"\n--- start {self.starts}\n".encode())
            log.flush()
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "manage.py",
                    "serve",
                    "--port",
                    str(self.port),
                    *([] if migrate else ["--no-migrate"]),
                ],
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

        def ready() -> bool:
            if self.process is None or self.process.poll() is not None:
                raise RuntimeError(f"serve exited:\n{self.log.read_text()[-3000:]}")
            return self.log.read_text().count(READY) >= self.starts

        wait_for(ready, START_DEADLINE, "serve ready")
        return self

    def kill(self) -> None:
        """``kill -9``: no cleanup, the heartbeat and the running task's row left as they were."""
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)

    def sql(self, query: str, *params: Any) -> list[dict[str, Any]]:
        """Rows of ``query`` on the console's SQLite database, as dicts."""
        conn = sqlite3.connect(self.var / "reviewconsole.sqlite3", timeout=20)
        try:
            conn.row_factory = sqlite3.Row
            return [dict(row) for row in conn.execute(query, params).fetchall()]
        finally:
            conn.close()

    def tasks(self, task_name: str) -> list[dict[str, Any]]:
        """The django-tasks-db rows of tasks whose path ends with ``task_name``."""
        return self.sql(
            "SELECT id, status, worker_ids FROM django_tasks_database_dbtaskresult WHERE task_path LIKE ?",
            f"%.{task_name}",
        )
