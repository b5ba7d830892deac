"""Our engine on the peers' workload and harness (``bench/peers/common.py``).

The workflow is the product's email review (``reviewconsole/demo/email_review.py``): an LLM
agent drafts, so each draft goes through our real agent path (instruction template, model
request, event with ``output_key``). The model is deterministic and returns
``common.draft_email_text(complaint, feedback)`` in one piece, the same cost as the peers' fake
LLM.

Variants:
    memory   -- ``InMemoryStore``.
    orm      -- the console's ORM store on SQLite (WAL), Django configured in-process with the
                embedded settings. Django is set up once per process on a migrated template
                database holding the demo data (``manage.py demo``: users, queues, webhook
                endpoints), and every driver gets a fresh copy of it (fresh storage, as the
                peers' drivers get a fresh file). ``storage_bytes()`` is that file's size after
                a WAL checkpoint (``PRAGMA wal_checkpoint(TRUNCATE)``), plus any WAL left.
    postgres -- the same store on PostgreSQL (``$BENCH_DATABASE_URL``, else ``$DATABASE_URL``; the
                role needs CREATEDB): the template is a database migrated with the demo data,
                and every driver gets a fresh ``CREATE DATABASE … TEMPLATE`` copy of it, dropped
                at its close. ``storage_bytes()`` is ``pg_database_size`` (pages, not payload).

Run from the project venv: ``python -m bench.ours --sessions 20 --reps 1 --loops 1,10``.

``python -m bench.ours --storage-breakdown 100`` drives one ORM session through 100 revise loops
and prints (one JSON record, metric ``storage_breakdown``) how many bytes each table grew per
loop (SQLite's ``dbstat``: payload and pages), next to the bytes of the draft texts themselves.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sqlite3
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # executed as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import run_bench
from bench.peers import cli, common, measure
from engine import Content, LlmResponse, Part

SYSTEM = "reviewconsole"
DB_NAME = "reviewconsole.sqlite3"

_template: Path | None = None
"""The migrated database with the demo data, made once per process (see :func:`_template_db`)."""

_pg_template: str | None = None
"""The PostgreSQL template database's name, made once per process (see :func:`_pg_template_db`)."""


class BenchModel:
    """Returns the peers' fake-LLM draft for the complaint and feedback in the instruction."""

    name = "bench-model"
    offline = True

    async def generate(self, request: Any) -> AsyncIterator[Any]:
        text = request.instruction
        complaint = text.split("Customer complaint:\n", 1)[1].split("\n\nReviewer feedback", 1)[0]
        feedback = text.split("(apply it if present):\n", 1)[1].strip()
        yield LlmResponse(Content(role="model", parts=[Part(text=common.draft_email_text(complaint, feedback))]))


def _template_db() -> Path:
    """Set Django up (embedded settings, SQLite) once per process; return the template database."""
    global _template
    if _template is not None:
        return _template
    var = Path(tempfile.mkdtemp(prefix="bench-ours-"))
    atexit.register(shutil.rmtree, var, True)
    template = var / "template.sqlite3"
    # The embedded default, whatever the caller's environment says (e.g. pytest's settings).
    os.environ["DJANGO_SETTINGS_MODULE"] = "reviewconsole.settings.embedded"
    os.environ["REVIEWCONSOLE_VAR_DIR"] = str(var)
    os.environ["REVIEWCONSOLE_SQLITE_PATH"] = str(template)
    os.environ.setdefault("DEMO_PASSWORD", "bench-password-1")
    for name in ("DATABASE_URL", "REDIS_URL", "REVIEWCONSOLE_TASK_BACKEND"):
        os.environ.pop(name, None)
    import django
    from django.core.management import call_command
    from django.db import connections

    django.setup()
    call_command("migrate", verbosity=0)
    with open(os.devnull, "w") as devnull:
        call_command("demo", stdout=devnull)  # the queues the workflows route to, as on the console
    connections.close_all()
    common.sqlite_file_bytes(template)  # fold the WAL: the file alone is the template
    _template = template
    return template


def _pg_url() -> str:
    url = os.environ.get("BENCH_DATABASE_URL") or os.environ.get("DATABASE_URL")
    if not url:
        raise SystemExit("the postgres variant needs BENCH_DATABASE_URL or DATABASE_URL (postgres://…)")
    return url


def _pg_admin(sql: str) -> None:
    """Run ``sql`` outside a transaction on the server's ``postgres`` database (CREATE/DROP DATABASE)."""
    import dj_database_url
    import psycopg  # the project's PostgreSQL driver (psycopg 3); only this variant needs it

    config = dj_database_url.parse(_pg_url())
    with psycopg.connect(
        dbname="postgres",
        user=config["USER"],
        password=config["PASSWORD"],
        host=config["HOST"],
        port=config["PORT"] or 5432,
        autocommit=True,
    ) as con:
        con.execute(sql)


def _pg_template_db() -> str:
    """Set Django up on PostgreSQL once per process; return the template database's name."""
    global _pg_template
    if _pg_template is not None:
        return _pg_template
    import dj_database_url

    name = f"bench_ours_template_{os.getpid()}"
    _pg_admin(f'DROP DATABASE IF EXISTS "{name}"')
    _pg_admin(f'CREATE DATABASE "{name}"')
    atexit.register(_pg_admin, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    var = Path(tempfile.mkdtemp(prefix="bench-ours-"))
    atexit.register(shutil.rmtree, var, True)
    config = dj_database_url.parse(_pg_url())
    config["NAME"] = name
    os.environ["DJANGO_SETTINGS_MODULE"] = "reviewconsole.settings.embedded"
    os.environ["REVIEWCONSOLE_VAR_DIR"] = str(var)
    os.environ["DATABASE_URL"] = _url(config)
    os.environ["DB_POOL_MAX_SIZE"] = "0"  # one connection per thread, kept: as SQLite's
    os.environ.setdefault("DEMO_PASSWORD", "bench-password-1")
    for env_name in ("REDIS_URL", "REVIEWCONSOLE_TASK_BACKEND", "REVIEWCONSOLE_SQLITE_PATH"):
        os.environ.pop(env_name, None)
    import django
    from django.core.management import call_command
    from django.db import connections

    django.setup()
    call_command("migrate", verbosity=0)
    with open(os.devnull, "w") as devnull:
        call_command("demo", stdout=devnull)
    connections.close_all()
    _pg_template = name
    return name


def _url(config: dict[str, Any]) -> str:
    return (
        f"postgres://{config['USER']}:{config['PASSWORD']}@{config['HOST']}:{config['PORT'] or 5432}/{config['NAME']}"
    )


def _use_database(path: Path | str) -> None:
    """Point Django's default database at ``path`` (a file, or a PostgreSQL database's name;
    connections reopen on next use)."""
    from django.db import connections

    connections.close_all()
    # settings.DATABASES, connections.settings and each DatabaseWrapper.settings_dict share this dict.
    connections["default"].settings_dict["NAME"] = str(path)


class OursDriver(common.AsyncPeerDriver):
    """Start = create a session and run it to the first pause; resume = answer and run."""

    _copies = 0
    """PostgreSQL copies made by this process (each driver's database name)."""

    def __init__(self, variant: str) -> None:
        super().__init__(variant)
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._db: Path | None = None
        self._pg_db: str | None = None
        self._sessions: dict[str, str] = {}

    def open(self) -> None:
        if self.variant == "postgres":
            template = _pg_template_db()
            OursDriver._copies += 1
            self._pg_db = f"{template}_copy{OursDriver._copies}"
            _pg_admin(f'CREATE DATABASE "{self._pg_db}" TEMPLATE "{template}"')
            _use_database(self._pg_db)
        if self.variant == "orm":
            # Django is set up and migrated before the event loop exists (migrate is sync-only).
            template = _template_db()
            self._tmp = tempfile.TemporaryDirectory(prefix="bench-ours-db-")
            self._db = Path(self._tmp.name) / DB_NAME
            shutil.copyfile(template, self._db)
            _use_database(self._db)
        super().open()

    async def aopen(self) -> None:
        from engine import InMemoryStore, Runner
        from reviewconsole.demo import email_review

        if self.variant in ("orm", "postgres"):
            from asgiref.sync import sync_to_async
            from django.db import connections

            from reviewconsole.workflow_sessions.store import OrmStore

            # The store's thread (sync_to_async) may hold a connection to a previous driver's file.
            await sync_to_async(connections.close_all)()
            store: Any = OrmStore()
        else:
            store = InMemoryStore()
        model = BenchModel()
        self.runner = Runner(email_review.build(model), store, app_name="email-review", model=model)

    async def aclose(self) -> None:
        if self._pg_db is not None:
            from asgiref.sync import sync_to_async
            from django.db import connections

            await sync_to_async(connections.close_all)()
            connections.close_all()
            _pg_admin(f'DROP DATABASE IF EXISTS "{self._pg_db}" WITH (FORCE)')
            self._pg_db = None
        if self._tmp is not None:
            from asgiref.sync import sync_to_async
            from django.db import connections

            await sync_to_async(connections.close_all)()
            connections.close_all()
            self._tmp.cleanup()
            self._tmp = None

    def _outcome(self, result: Any) -> common.Outcome:
        if result.status == "waiting":
            return common.Paused(result.session.state["draft"])
        for event in reversed(result.events):  # the last message that is not a draft
            if event.author != "draft_email" and event.text:
                return common.Finished(event.text)
        return common.Finished("")

    async def astart(self, session_id: str, complaint: str) -> common.Outcome:
        record = await self.runner.create_session()
        self._sessions[session_id] = record.id
        return self._outcome(await self.runner.run(record.id, complaint, record=record))

    async def aresume(self, session_id: str, answer: str) -> common.Outcome:
        result = await self.runner.resume(self._sessions[session_id], {None: answer})
        if result.status != "waiting":
            self._sessions.pop(session_id, None)
        return self._outcome(result)

    def storage_bytes(self) -> int | None:
        if self._pg_db is not None:
            from django.db import connection

            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_database_size(current_database())")
                return int(cursor.fetchone()[0])
        if self._db is None:
            return None
        return common.sqlite_file_bytes(self._db)

    def table_bytes(self) -> dict[str, dict[str, int]]:
        """Per table and index: ``payload`` bytes (the rows' data) and ``pages`` bytes (dbstat)."""
        assert self._db is not None, "orm variant only"
        common.sqlite_file_bytes(self._db)
        con = sqlite3.connect(self._db)
        try:
            rows = con.execute("SELECT name, SUM(payload), SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
        finally:
            con.close()
        return {name: {"payload": int(payload or 0), "pages": int(pages or 0)} for name, payload, pages in rows}

    def versions(self) -> dict[str, str]:
        return {"reviewconsole": run_bench.commit_id()}

    def notes(self) -> str:
        return "email-review workflow with an LLM agent drafting; deterministic model"


def draft_bytes(complaint: str, loops: int) -> float:
    """Mean UTF-8 bytes of the drafts written in revise loops 1..``loops`` (one copy each)."""
    total = sum(len(common.draft_email_text(complaint, common.feedback_for(j)).encode()) for j in range(1, loops + 1))
    return total / loops


def storage_breakdown(loops: int) -> dict[str, Any]:
    """One ORM session through ``loops`` revise loops: what each table grew by per loop."""
    driver = OursDriver("orm")
    driver.open()
    try:
        for i in range(5):  # warm-up, and tables past their first pages
            driver.start(f"w{i}", common.complaint_for(i))
            driver.resume(f"w{i}", common.APPROVE)
        complaint = common.complaint_for(424242)
        driver.start("s", complaint)
        before, bytes0 = driver.table_bytes(), driver.storage_bytes()
        for j in range(1, loops + 1):
            driver.resume("s", common.feedback_for(j))
        after, bytes1 = driver.table_bytes(), driver.storage_bytes()
    finally:
        driver.close()
    assert bytes0 is not None and bytes1 is not None
    tables = {}
    for name in sorted(set(before) | set(after)):
        b, a = before.get(name, {"payload": 0, "pages": 0}), after.get(name, {"payload": 0, "pages": 0})
        grew = {k: (a[k] - b[k]) / loops for k in ("payload", "pages")}
        if grew["payload"] or grew["pages"]:
            tables[name] = grew
    return {
        "loops": loops,
        "file_growth_bytes_per_loop": (bytes1 - bytes0) / loops,
        "payload_growth_bytes_per_loop": sum(t["payload"] for t in tables.values()),
        "draft_bytes_per_loop": draft_bytes(complaint, loops),
        "tables_bytes_per_loop": dict(sorted(tables.items(), key=lambda kv: -kv[1]["payload"])),
    }


def main(argv: list[str]) -> int:
    if "--storage-breakdown" in argv:
        loops = int(argv[argv.index("--storage-breakdown") + 1])
        driver = OursDriver("orm")
        emitter = measure.Emitter(SYSTEM, "orm", driver.versions(), driver.notes())
        rec = emitter.emit("storage_breakdown", **storage_breakdown(loops))
        print(json.dumps(rec["tables_bytes_per_loop"], indent=1), file=sys.stderr)
        return 0
    return cli.run_cli(SYSTEM, {"memory": OursDriver, "orm": OursDriver, "postgres": OursDriver}, argv)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
