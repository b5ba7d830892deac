"""``python manage.py serve``: migrate, then run Daphne (HTTP + websockets) and the task worker.

One process: Daphne serves the ASGI app on the main thread; worker threads run sessions. The
in-memory channel layer is shared because everything is in this process. Static files (the inbox's
CSS and JS) are served by the same process, as nothing else serves them on the embedded default.
Ctrl-C or SIGTERM stops it all (the requests being served finish first, up to 10 s; exit 0); an
address it cannot listen on (e.g. a port in use) exits 1. Links in
notification emails use the served address (``--host``, ``--port``) unless ``BASE_URL`` is set
(``REVIEWCONSOLE_BASE_URL``). ``--reload`` serves from a child process restarted whenever the code
of a registered workflow package changes (:mod:`reviewconsole.console.reload`).
"""

from __future__ import annotations

import asyncio
import gc
import os
from typing import Any

from daphne.endpoints import build_endpoint_description_strings
from daphne.server import Server
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from reviewconsole.asgi import application
from reviewconsole.console.reload import ChildFailedError, die_with_parent, serve_with_reload
from reviewconsole.console.static_files import StaticFilesHandler
from reviewconsole.console.worker import ThreadWorker
from reviewconsole.group_sender import bind_loop
from reviewconsole.hints import send_webhook_command
from reviewconsole.hooks.models import WebhookEndpoint
from reviewconsole.in_flight import drain
from reviewconsole.workflow_sessions.recovery import RecoveryLoop


def _drained_first(kill: Any) -> Any:
    """Daphne's ``kill_all_applications`` (its "before shutdown" trigger, on SIGTERM / Ctrl-C)
    run once the requests being served and the AG-UI streams' calls have finished
    (``in_flight.drain`` on a thread, the loop still running; new requests are answered 503 from
    then on). Run beside it, as it was, the kill cancelled a request whose view was still running
    on its thread: Django then closed the request's body under it, and the view failed reading
    it (a traceback in the log, a 500 to the client)."""

    def drain_then_kill() -> Any:
        # Here, not at the top: the reactor is the one Daphne's server installed when it started.
        from twisted.internet import threads

        drained = threads.deferToThread(drain)
        drained.addBoth(lambda _: kill())
        return drained

    return drain_then_kill


def served_base_url(host: str, port: int) -> str:
    """The address to put in links for a console served on ``host:port`` (loopback for a
    wildcard host: the names clients use are not known here; set ``BASE_URL`` for them)."""
    shown = "127.0.0.1" if host in ("", "0.0.0.0", "::") else host  # noqa: S104 (compared, not bound)
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"
    return f"http://{shown}:{port}"


def _send_hint(url: str) -> str:
    """How to send the demo's first webhook to this console ("" when the demo has no endpoint)."""

    try:
        if not WebhookEndpoint.objects.filter(slug="email-review", enabled=True).exists():
            return ""
    except DatabaseError:  # not migrated yet (--no-migrate): no hint, the console still starts
        return ""
    return send_webhook_command(url)


class Command(BaseCommand):
    help = "Migrate, then serve the console (Daphne) with its task worker, until Ctrl-C."
    # Checked in handle() instead, also when called with call_command: nothing starts with a
    # broken workflow registry (SystemCheckError names each problem).
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1", help="Address to bind (default 127.0.0.1).")
        parser.add_argument("--port", type=int, default=8000, help="Port to bind (default 8000).")
        parser.add_argument(
            "--workers", type=int, default=2, help="Task worker threads (default 2: a mail task never delays a run)."
        )
        parser.add_argument(
            "--outbound-workers",
            type=int,
            default=1,
            help="Threads delivering outbound events (default 1; a silent receiver never holds a run's thread).",
        )
        parser.add_argument("--no-migrate", action="store_true", help="Skip migrations.")
        parser.add_argument(
            "--reload", action="store_true", help="Restart when the code of a registered workflow package changes."
        )

    def handle(
        self, *args: Any, host: str, port: int, workers: int, outbound_workers: int, no_migrate: bool, **options: Any
    ) -> None:
        die_with_parent()  # the child of --reload: it ends with its parent
        self.check()
        if not no_migrate:
            call_command("migrate", interactive=False, verbosity=0)
            self.stdout.write("Database migrated.")
        if options.get("reload"):
            try:
                child = ["--host", host, "--port", str(port), "--workers", str(workers)]
                serve_with_reload([*child, "--outbound-workers", str(outbound_workers)], self.stdout)
            except ChildFailedError as exc:
                raise CommandError(str(exc)) from None
            return

        if host in ("0.0.0.0", "::"):  # noqa: S104 (the user asked to listen on every interface)
            self.stdout.write("Listening on every interface: list the names clients use in DJANGO_ALLOWED_HOSTS.")
        elif host not in settings.ALLOWED_HOSTS:
            settings.ALLOWED_HOSTS.append(host)
        if "BASE_URL" not in getattr(settings, "REVIEWCONSOLE", {}) and "REVIEWCONSOLE_BASE_URL" not in os.environ:
            os.environ["REVIEWCONSOLE_BASE_URL"] = served_base_url(host, port)  # read by inbox_setting
        worker = ThreadWorker(count=workers, outbound=outbound_workers)
        recovery = RecoveryLoop()  # runs left half-done by a crash are picked up again
        hint = _send_hint(served_base_url(host, port))

        def ready() -> None:
            bind_loop(asyncio.get_event_loop())
            gc.freeze()  # what the set-up loaded lives as long as the process (reviewconsole/asgi.py)
            worker.start()
            recovery.start()
            self.stdout.write(f"Console running at http://{host}:{port}/ (Ctrl-C to stop)")
            if hint:
                self.stdout.write(f"Send one: {hint}")

        server = Server(
            application=StaticFilesHandler(application),
            endpoints=build_endpoint_description_strings(host=host, port=port),
            ready_callable=ready,
            signal_handlers=True,
        )
        server.kill_all_applications = _drained_first(server.kill_all_applications)  # type: ignore[method-assign]
        try:
            server.run()
        finally:
            recovery.stop()
            worker.stop()
            bind_loop(None)
            self.stdout.write("Stopped.")
        if not server.listening_addresses:  # Daphne logged "Listen failure" and returned
            raise CommandError(f"The console could not listen on {host}:{port}; nothing was served.")
