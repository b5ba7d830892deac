"""The embedded default's files are private (issue 13): ``var/`` 0700, the SQLite database and its
WAL and SHM files 0600, whatever the umask, so no other local user reads secrets or session keys."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import json, os, stat, django
django.setup()
from django.conf import settings
from django.db import connection
with connection.cursor() as cursor:
    cursor.execute("CREATE TABLE probe (x integer)")
    cursor.execute("INSERT INTO probe VALUES (1)")
    name = settings.DATABASES["default"]["NAME"]
    # While the connection is open SQLite keeps its -wal and -shm files.
    print(json.dumps({p: stat.S_IMODE(os.stat(p).st_mode) for p in (name, name + "-wal", name + "-shm")}))
connection.close()
"""


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_var_and_the_sqlite_files_are_private(tmp_path):
    var = tmp_path / "var"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REVIEWCONSOLE_SQLITE_PATH")}
    env.update(DJANGO_SETTINGS_MODULE="reviewconsole.settings.embedded", REVIEWCONSOLE_VAR_DIR=str(var))
    # A permissive umask, as a shared machine may have: the modes must not depend on it.
    done = subprocess.run(
        [sys.executable, "-c", f"import os; os.umask(0o002); exec({SCRIPT!r})"],
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        check=True,
        capture_output=True,
        text=True,
    )
    modes = json.loads(done.stdout.strip().splitlines()[-1])
    assert _mode(var) == 0o700
    assert sorted(Path(p).name for p in modes) == [
        "reviewconsole.sqlite3",
        "reviewconsole.sqlite3-shm",
        "reviewconsole.sqlite3-wal",
    ]
    assert set(modes.values()) == {0o600}, modes
