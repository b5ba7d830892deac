"""The scale-out stack for tests and the load script: real processes on this machine's loopback.

One fresh PostgreSQL database on the server of ``$DATABASE_URL`` (its role needs CREATEDB), the
Redis of ``$REDIS_URL`` (a key prefix of our own), ``web`` Daphne processes and ``workers``
``manage.py worker`` processes on ``reviewconsole.settings.production``, and nginx in front
(TLS with a throwaway self-signed certificate, round robin, websockets, ``/static/`` from
``collectstatic``). ``web_servers=("daphne", "uvicorn")`` gives each server ``web`` processes of
its own behind an nginx of its own (a :class:`~tests.scaleout.stack_parts.Front`), sharing the
database, Redis and workers: :meth:`Stack.use` picks the front that :attr:`Stack.url` (and so
every client made after it) goes through, the first one by default. Leases last ``lease_ttl``
seconds (short, so crash tests finish quickly), and so do the workers' heartbeats
(``REVIEWCONSOLE_TASK_LEASE``).
The probe workflow is registered and logs node executions to :attr:`Stack.exec_log`.

Every process writes to its own log file under the stack's directory (never to a pipe that
could fill up); :meth:`Stack.kill` sends SIGKILL, as ``kill -9`` does.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg
from psycopg.rows import dict_row

from tests.scaleout.stack_parts import (
    API_TOKEN,
    PASSWORD,
    SECRET,
    Front,
    Proc,
    free_port,
    sign,
    wait_for,
    web_command,
    write_nginx_conf,
)

ROOT = Path(__file__).resolve().parents[2]
START_DEADLINE = 60.0  # seconds a process may take to come up


def _with_db(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


class Stack:
    """Start with :meth:`start`, stop with :meth:`stop`; see the module docstring."""

    def __init__(
        self,
        directory: Path,
        *,
        web: int = 2,
        workers: int = 2,
        threads: int = 2,
        lease_ttl: float = 2.0,
        extra_env: dict[str, str] | None = None,
        web_servers: tuple[str, ...] = ("daphne",),
    ) -> None:
        server_url = os.environ.get("DATABASE_URL", "")
        redis_url = os.environ.get("REDIS_URL", "")
        if not server_url.startswith(("postgres://", "postgresql://")) or not redis_url:
            raise RuntimeError("The scale-out stack needs DATABASE_URL (PostgreSQL) and REDIS_URL.")
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.db_name = f"rc_scaleout_{os.getpid()}_{secrets.token_hex(3)}"
        self.server_url = _with_db(server_url, "postgres")
        self.db_url = _with_db(server_url, self.db_name)
        self.redis_url = redis_url
        self.exec_log = self.dir / "exec.log"
        self.exec_log.touch()
        self.static_root = self.dir / "var" / "staticfiles"
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "reviewconsole.settings.production",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(60),
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "DJANGO_SECURE_PROXY_SSL_HEADER": "1",
            "DJANGO_HSTS_SECONDS": "0",
            "DATABASE_URL": self.db_url,
            "REDIS_URL": redis_url,
            "REVIEWCONSOLE_CHANNELS_PREFIX": f"rc-{self.db_name}:",
            "REVIEWCONSOLE_LEASE_TTL": str(lease_ttl),
            "REVIEWCONSOLE_WORKFLOWS": "reviewconsole.demo",  # production settings register none by default
            "REVIEWCONSOLE_TASK_LEASE": str(lease_ttl),
            "REVIEWCONSOLE_OUTBOUND_ALLOW_PRIVATE": "1",  # the tests' receivers listen on loopback
            "REVIEWCONSOLE_TEST_WORKFLOWS": "1",
            "REVIEWCONSOLE_EXEC_LOG": str(self.exec_log),
            "REVIEWCONSOLE_VAR_DIR": str(self.dir / "var"),
            "REVIEWCONSOLE_WEBHOOK_RATE_LIMIT": "1000000",
            "DEMO_PASSWORD": PASSWORD,
            "DEMO_WEBHOOK_SECRET": SECRET,
            "DEMO_API_TOKEN": API_TOKEN,
            "PYTHONUNBUFFERED": "1",
            **(extra_env or {}),
        }
        self.env.pop("DJANGO_CONFIGURATION", None)
        self.fronts: dict[str, Front] = {}
        for server in web_servers:
            name = "web" if server == web_servers[0] else f"{server}-web"  # web0…: the first server's
            webs = [
                Proc(f"{name}{n}", web_command(server, port), self.dir / f"{name}{n}.log", port=port)
                for n, port in enumerate(free_port() for _ in range(web))
            ]
            self.fronts[server] = Front(server, webs, free_port())
        self.webs = [proc for front in self.fronts.values() for proc in front.webs]
        self.use(web_servers[0])
        self.workers = [
            Proc(
                f"worker{n}",
                [sys.executable, "manage.py", "worker", "--threads", str(threads)],  # woken by NOTIFY
                self.dir / f"worker{n}.log",
                ready="Worker ready",
            )
            for n in range(workers)
        ]
        self._db: psycopg.Connection[dict[str, Any]] | None = None

    def use(self, server: str) -> Front:
        """Make ``server``'s front the one :attr:`url` and :attr:`port` name (clients made after this
        go through it); returns it."""
        self.front = self.fronts[server]
        self.port = self.front.port
        self.url = self.front.url
        return self.front

    @property
    def nginx(self) -> Proc | None:
        """The nginx of the front in use."""
        return self.front.nginx

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> Stack:
        with psycopg.connect(self.server_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{self.db_name}"')
        for command in (["migrate", "--noinput"], ["demo"], ["collectstatic", "--noinput"]):
            self.manage(*command)
        for proc in [*self.webs, *self.workers]:
            self.launch(proc)
        for front in self.fronts.values():
            self._start_nginx(front)
        for proc in [*self.webs, *self.workers]:
            self.wait_ready(proc)
        for front in self.fronts.values():
            with httpx.Client(base_url=front.url, verify=False, timeout=30) as client:
                wait_for(lambda: client.get("/accounts/login/").status_code == 200, START_DEADLINE, "nginx in front")
        return self

    def stop(self) -> None:
        nginxes = [front.nginx for front in self.fronts.values() if front.nginx is not None]
        for proc in [*self.webs, *self.workers, *nginxes]:
            if proc.alive():
                assert proc.process is not None
                proc.process.send_signal(signal.SIGTERM)
        for proc in [*self.webs, *self.workers, *nginxes]:
            if proc.process is not None:
                try:
                    proc.process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.process.kill()
                    proc.process.wait(timeout=15)
        if self._db is not None:
            with contextlib.suppress(Exception):
                self._db.close()
        with contextlib.suppress(Exception), psycopg.connect(self.server_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.db_name}" WITH (FORCE)')

    def manage(self, *args: str, timeout: float = 180) -> str:
        """Run ``manage.py`` with the stack's environment; returns its output."""
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

    def launch(self, proc: Proc) -> None:
        with proc.log.open("ab") as log:
            log.write(f"\n--- start {time.strftime('%H:%M:%S')}\n".encode())
            log.flush()
            proc.process = subprocess.Popen(proc.args, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        proc.history.append(proc.process.pid)

    def wait_ready(self, proc: Proc) -> None:
        def up() -> bool:
            if not proc.alive():
                raise RuntimeError(f"{proc.name} exited:\n{proc.log.read_text()[-3000:]}")
            if proc.ready is not None:
                return proc.log.read_text().count(proc.ready) >= len(proc.history)
            with socket.create_connection(("127.0.0.1", proc.port or 0), timeout=0.5):
                return True

        deadline = time.monotonic() + START_DEADLINE
        while True:
            try:
                if up():
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"{proc.name} did not come up:\n{proc.log.read_text()[-3000:]}")
            time.sleep(0.05)

    def kill(self, proc: Proc) -> None:
        """``kill -9``: no cleanup, no lease release, no goodbye to websocket clients."""
        assert proc.process is not None
        proc.process.kill()
        proc.process.wait(timeout=10)

    def restart(self, proc: Proc) -> None:
        if proc.alive():
            self.kill(proc)
        self.launch(proc)
        self.wait_ready(proc)

    def worker_with_pid(self, pid: int) -> Proc:
        return next(p for p in self.workers if p.alive() and p.pid == pid)

    def create_reviewers(self, count: int, queues: tuple[str, ...] = ("probe", "support")) -> list[str]:
        """Users ``reviewer0``… in the groups of ``queues``, all with :data:`PASSWORD`; their names."""
        names = [f"reviewer{n}" for n in range(count)]
        code = (
            "from django.contrib.auth.hashers import make_password\n"
            "from django.contrib.auth.models import Group, User\n"
            f"groups = [Group.objects.get(name='queue:' + q) for q in {list(queues)!r}]\n"
            f"hashed = make_password({PASSWORD!r})\n"
            f"for name in {names!r}:\n"
            "    user, _ = User.objects.get_or_create(username=name, defaults={'password': hashed})\n"
            "    user.groups.add(*groups)\n"
        )
        self.manage("shell", "-c", code)
        return names

    # -- nginx -------------------------------------------------------------------------------

    def _start_nginx(self, front: Front) -> None:
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        prefix = self.dir / f"nginx-{front.server}"
        prefix.mkdir(exist_ok=True)
        conf = write_nginx_conf(prefix, front.port, front.webs, self.static_root)
        args = [nginx, "-p", str(prefix), "-c", str(conf), "-g", "daemon off;"]
        front.nginx = Proc(f"nginx-{front.server}", args, prefix / "out.log", port=front.port)
        self.launch(front.nginx)
        self.wait_ready(front.nginx)

    # -- the database, the servers -----------------------------------------------------------

    def sql(self, query: str, *params: Any) -> list[dict[str, Any]]:
        """Rows of ``query`` on the stack's database (reconnects after a restart)."""
        for attempt in range(50):
            try:
                if self._db is None or self._db.closed:
                    self._db = psycopg.connect(self.db_url, autocommit=True, row_factory=dict_row)
                cursor = self._db.execute(query, params)  # type: ignore[arg-type]
                return cursor.fetchall() if cursor.description is not None else []
            except psycopg.OperationalError:
                self._db = None
                if attempt == 49:
                    raise
                time.sleep(0.2)
        raise AssertionError("unreachable")

    def restart_postgres(self) -> float:
        """Restart the PostgreSQL server (every connection drops); returns the seconds it was away."""
        (name,) = self.sql("SHOW cluster_name")[0].values()
        if "/" not in str(name):
            raise RuntimeError(f"cannot tell which cluster to restart (cluster_name={name!r})")
        version, cluster = str(name).split("/", 1)
        started = time.monotonic()
        subprocess.run(["pg_ctlcluster", version, cluster, "restart", "-m", "fast"], check=True, capture_output=True)
        self._db = None
        wait_for(lambda: self.sql("SELECT 1"), 60, "PostgreSQL back")
        return time.monotonic() - started

    def restart_redis(self) -> float:
        """Shut Redis down and start it again with the same port and config file; returns seconds away."""
        parts = urlsplit(self.redis_url)
        host, port = parts.hostname or "127.0.0.1", str(parts.port or 6379)
        cli = ["redis-cli", "-h", host, "-p", port]
        info = dict(
            line.split(":", 1)
            for line in subprocess.run([*cli, "INFO", "server"], capture_output=True, text=True, check=True)
            .stdout.replace("\r", "")
            .splitlines()
            if ":" in line
        )
        executable = info.get("executable", "")
        if not Path(executable).is_file():  # INFO names it as it was started, maybe relative
            executable = shutil.which("redis-server") or "/usr/bin/redis-server"
        config = [info["config_file"]] if info.get("config_file") else []
        started = time.monotonic()
        subprocess.run([*cli, "SHUTDOWN", "NOSAVE"], capture_output=True, check=False)
        wait_for(
            lambda: subprocess.run([*cli, "PING"], capture_output=True, check=False).returncode != 0,
            10,
            "Redis down",
        )
        subprocess.run(
            [executable, *config, "--port", port, "--bind", host, "--daemonize", "yes", "--save", ""], check=True
        )
        pong = subprocess.run
        wait_for(lambda: pong([*cli, "PING"], capture_output=True, text=True).stdout.strip() == "PONG", 20, "Redis up")
        return time.monotonic() - started

    # -- HTTP --------------------------------------------------------------------------------

    def client(self, **kwargs: Any) -> httpx.Client:
        """An HTTPS client to nginx (the certificate is self-signed)."""
        return httpx.Client(base_url=self.url, verify=False, timeout=kwargs.pop("timeout", 30), **kwargs)

    def get(self, path: str) -> httpx.Response:
        with self.client() as client:
            return client.get(path)

    def send_webhook(self, client: httpx.Client, slug: str, data: Any, webhook_id: str | None = None) -> httpx.Response:
        """POST a signed webhook through nginx."""
        body = json.dumps(data)
        headers = {"content-type": "application/json", **sign(body, webhook_id or f"msg_{uuid.uuid4().hex}", slug)}
        return client.post(f"/hooks/{slug}/", content=body, headers=headers)

    def start_probe(self, client: httpx.Client | None = None, **data: Any) -> str:
        """Start a probe session through the webhook door; returns its id."""
        own = client is None
        client = client or self.client()
        try:
            response = self.send_webhook(client, "probe", data, webhook_id=f"msg_{uuid.uuid4().hex}")
        finally:
            if own:
                client.close()
        assert response.status_code == 202, response.text
        return str(response.json()["session_id"])

    # -- what happened -----------------------------------------------------------------------

    def executions(self, session_id: str) -> list[tuple[str, int]]:
        """``(node, pid)`` per node execution of the session, in order."""
        rows = []
        for line in self.exec_log.read_text().splitlines():
            sid, node, pid = line.split()
            if sid == session_id:
                rows.append((node, int(pid)))
        return rows

    def execution_counts(self, session_id: str) -> Counter[str]:
        return Counter(node for node, _ in self.executions(session_id))

    def session(self, session_id: str) -> dict[str, Any]:
        return self.sql("SELECT * FROM workflow_sessions_workflowsession WHERE id = %s", session_id)[0]

    def count_status(self, session_ids: list[str], status: str) -> int:
        """How many of these sessions are in ``status``."""
        query = "SELECT count(*) AS n FROM workflow_sessions_workflowsession WHERE status = %s AND id = ANY(%s)"
        return int(self.sql(query, status, list(session_ids))[0]["n"])

    def wait_status(self, session_id: str, status: str, timeout: float = 30) -> dict[str, Any]:
        return wait_for(
            lambda: (row := self.session(session_id))["status"] == status and row,
            timeout,
            f"session {session_id} {status}",
        )

    def events(self, session_id: str) -> list[dict[str, Any]]:
        return self.sql(
            "SELECT seq, event_id, author, node_path, data FROM workflow_sessions_event"
            " WHERE session_id = %s ORDER BY seq",
            session_id,
        )

    def assert_events_whole(self, session_id: str) -> list[dict[str, Any]]:
        """Events numbered 1..n without gaps, and no event stored twice."""
        events = self.events(session_id)
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        ids = [e["event_id"] for e in events]
        assert len(ids) == len(set(ids)), "an event was stored twice"
        return events
