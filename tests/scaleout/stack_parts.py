"""What the scale-out stack (``stack.py``) is built from, none of it needing a running stack.

The test credentials the stack seeds with ``manage.py demo`` and the clients log in and sign
with (:data:`PASSWORD`, :data:`SECRET`, :data:`API_TOKEN`, :func:`sign`); a free loopback port;
:func:`wait_for`, polling until a condition holds; :class:`Proc`, one restartable process of the
stack; and nginx's files in front of the Daphne processes (a throwaway self-signed certificate
and the config: TLS, round robin, websockets, ``/static/``), :func:`write_nginx_conf`.

Apart from ``stack.py`` (the :class:`~tests.scaleout.stack.Stack` itself: its processes'
lifecycle, its database, HTTP through nginx, what happened) so that each module holds one
concern and stays under the project's line limit.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PASSWORD = "scaleout-pass-0123456789"  # a throwaway test password
SECRET = "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="  # the demo webhook secret
API_TOKEN = "rc_scaleout-test-token-0123456789abcdefghijklmnop"  # the demo API client's token
OPENSSL = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1"]
OPENSSL += ["-addext", "subjectAltName=IP:127.0.0.1"]


def sign(body: str, webhook_id: str, slug: str = "email-review") -> dict[str, str]:
    """Standard Webhooks headers for ``body`` to endpoint ``slug``, signed with its demo secret
    (derived from :data:`SECRET`; no Django needed)."""
    from standardwebhooks.webhooks import Webhook

    from reviewconsole.hooks.demo_secrets import endpoint_secret

    now = dt.datetime.now(tz=dt.UTC)
    return {
        "webhook-id": webhook_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Webhook(endpoint_secret(SECRET, slug)).sign(webhook_id, now, body),
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(condition: Any, timeout: float, what: str, interval: float = 0.05) -> Any:
    """Poll ``condition()`` until it returns something truthy; fail with ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = condition()
        except Exception:
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout:.0f} s")
        time.sleep(interval)


@dataclass
class Proc:
    """One process of the stack, restartable with the same command and log file."""

    name: str
    args: list[str]
    log: Path
    ready: str | None = None  # a line the log shows once it is up (else: the port answers)
    port: int | None = None
    process: subprocess.Popen[bytes] | None = None
    history: list[int] = field(default_factory=list)

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


WEB_SERVERS = ("daphne", "uvicorn")


def web_command(server: str, port: int) -> list[str]:
    """The command of one web process of ``server`` (one of :data:`WEB_SERVERS`) on loopback ``port``.

    Both take the client's address and scheme from nginx's ``X-Forwarded-For`` and
    ``X-Forwarded-Proto`` (which it overwrites): Daphne with ``--proxy-headers``, uvicorn with
    ``--proxy-headers`` and ``--forwarded-allow-ips 127.0.0.1`` (nginx's address). uvicorn runs
    one process per command, as Daphne does (no ``--workers``), without lifespan (the Channels
    router has none), with whatever ``auto`` finds for the loop, HTTP and websockets
    (``uvicorn[standard]``: uvloop, httptools, websockets). Both write their default access log to
    standard output (the process's log file). Raises ``ValueError`` for another ``server``.
    """
    app = "reviewconsole.asgi:application"
    if server == "daphne":
        return [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "--proxy-headers", app]
    if server == "uvicorn":
        return [
            *[sys.executable, "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port)],
            *["--proxy-headers", "--forwarded-allow-ips", "127.0.0.1", "--lifespan", "off"],
        ]
    raise ValueError(f"web server {server!r}: not one of {', '.join(WEB_SERVERS)}")


@dataclass
class Front:
    """One kind of web process (``server``: daphne or uvicorn) behind an nginx of its own on ``port``."""

    server: str
    webs: list[Proc]
    port: int
    nginx: Proc | None = None

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"


def write_nginx_conf(prefix: Path, port: int, webs: list[Proc], static_root: Path) -> Path:
    """A self-signed certificate and nginx's config under ``prefix``: TLS on ``port`` in front of the
    web processes ``webs`` (round robin, websockets) and ``/static/`` from ``static_root``;
    returns the config's path."""
    cert, key = prefix / "cert.pem", prefix / "key.pem"
    subprocess.run(
        [*OPENSSL, "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    upstreams = "\n".join(f"    server 127.0.0.1:{p.port} max_fails=0;" for p in webs)
    temp = "\n".join(f"  {n}_temp_path {prefix}/{n};" for n in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    conf = prefix / "nginx.conf"
    conf.write_text(
        f"""{"user root;" if os.geteuid() == 0 else ""}
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 4096; }}
http {{
  access_log off;
{temp}
  map $http_upgrade $connection_upgrade {{ default upgrade; '' close; }}
  upstream web {{
{upstreams}
  }}
  server {{
    listen 127.0.0.1:{port} ssl;
    ssl_certificate {cert};
    ssl_certificate_key {key};
    client_max_body_size 2m;
    location /static/ {{ alias {static_root}/; }}
    location / {{
      proxy_pass http://web;
      proxy_http_version 1.1;
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-Proto https;
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_read_timeout 3600s;
      proxy_next_upstream error timeout;
      proxy_connect_timeout 2s;
    }}
  }}
}}
""",
        encoding="utf-8",
    )
    return conf
