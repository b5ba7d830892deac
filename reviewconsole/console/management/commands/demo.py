"""``python manage.py demo``: demo users, groups, queues and webhook endpoints (idempotent).

The queues (and their groups) of every registered workflow come from ``sync_workflows``.

Users ``manager`` (reviewer and manager of every demo queue), ``reviewer`` (the support queue
only), ``auditor`` (reads everything in the admin, changes nothing) and ``admin`` (a superuser:
API clients, subscriptions, webhook secrets, Replay, Redeliver). Their password is
``$DEMO_PASSWORD`` when set, else one generated on the first run and kept in
``var/demo_password`` (``$REVIEWCONSOLE_VAR_DIR``, mode 0600) for the next runs; it is printed
either way. A user's password is only set when it does not match already, so a restart of
``./run`` (which runs this command) keeps everyone logged in.
Every workflow but the chats gets a webhook endpoint (``support-handoff`` waits for the user's
next chat message, which only an AG-UI client sends: it has none). Each has its own secret, so a
delivery captured at one cannot be replayed at another. With ``$DEMO_WEBHOOK_SECRET``
(``whsec_…``) set, ``email-review``'s (the README's curl example) is that secret and every other
one is derived from it (:func:`endpoint_secret`); without it each is generated once and kept.
``send_webhook`` signs with the endpoint's own; the admin shows them under *Webhooks*.
The API client ``demo`` may use every workflow; its token is ``$DEMO_API_TOKEN`` when set (else it
is created without a usable token: make one in the admin).
``--seed`` (``./run`` gives it) also leaves one request of each kind waiting in the inbox, only
while the database holds no session yet: the first run (:mod:`reviewconsole.console.seed`).
"""

from __future__ import annotations

import base64
import os
import secrets
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction
from django.db.models import Q

from reviewconsole.admin_site import INTERNAL
from reviewconsole.api.models import ApiClient
from reviewconsole.console.seed import seed_requests
from reviewconsole.hints import venv_python
from reviewconsole.hooks.demo_secrets import endpoint_secret
from reviewconsole.hooks.models import WebhookEndpoint, WebhookSecret
from reviewconsole.workflows import all_specs

AUDITORS = "auditors"
REVIEWERS = "reviewers"
AUDITED_APPS = (
    "workflow_sessions",
    "console",  # the admin's decisions
    "policies",
    "inbox",
    "hooks",
    "auth",
    "django_tasks_database",  # django-tasks-db's app label
    "audit",
    "api",
    "outbound",
    "admin",
    "axes",
)


def auditor_group() -> Group:
    """The auditor group: view permission on every model of the audited apps but the internals the
    admin shows superusers only (``admin_site.INTERNAL``), nothing else."""
    group, _ = Group.objects.get_or_create(name=AUDITORS)
    internal = Q()
    for label in INTERNAL:
        app_label, model = label.split(".")
        internal |= Q(content_type__app_label=app_label, content_type__model=model)
    group.permissions.set(
        Permission.objects.filter(content_type__app_label__in=AUDITED_APPS, codename__startswith="view_")
        .exclude(codename="view_webhooksecret")
        .exclude(internal)
    )
    return group


PASSWORD_FILE = "demo_password"  # noqa: S105 (a file name, not a password)
"""The generated demo password's file in ``settings.VAR_DIR`` (beside the SQLite database)."""


def demo_password() -> tuple[str, str]:
    """The demo users' password and where it comes from: ``$DEMO_PASSWORD`` when set, else the one
    kept in ``VAR_DIR/demo_password``, generated (and written, mode 0600) on the first run."""
    chosen = os.environ.get("DEMO_PASSWORD")
    if chosen:
        return chosen, "from DEMO_PASSWORD"
    path = Path(settings.VAR_DIR) / PASSWORD_FILE
    try:
        kept = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        kept = ""
    if not kept:
        kept = secrets.token_urlsafe(12)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(kept + "\n")
    path.chmod(0o600)  # also when an older file was readable by others
    return kept, f"kept in {path}; set DEMO_PASSWORD to choose one"


def _keep_password(user: Any, password: str) -> None:
    """Set ``password`` only when it is not the user's already: a new hash (new salt) would end
    every session of the user, so each restart of ``./run`` would log everybody out."""
    if not user.check_password(password):
        user.set_password(password)


def _demo_api_client() -> None:
    """The ``demo`` API client (every workflow); its token is ``$DEMO_API_TOKEN`` when set."""

    token = os.environ.get("DEMO_API_TOKEN")
    client = ApiClient.objects.filter(name="demo").first() or ApiClient(name="demo")
    client.workflows = ["*"]
    client.revoked_at = None
    if token:
        client.set_token(token)
    elif client.pk is None:
        client.set_token(ApiClient.new_token())  # unusable: nobody saw it; set DEMO_API_TOKEN or make one
    client.save()


class Command(BaseCommand):
    help = "Create the demo users, queues and webhook endpoints (safe to run again)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--seed",
            action="store_true",
            help="Also start one request of each kind, when the database has no session yet (the first run).",
        )

    @transaction.atomic
    def handle(self, *args: Any, seed: bool = False, **options: Any) -> None:
        password, origin = demo_password()
        users = get_user_model()

        reviewers, _ = Group.objects.get_or_create(name=REVIEWERS)
        # Every queue a workflow routes or escalates to, and triage: reviewers in queue:<slug>,
        # managers (reassign, take over) in managers:<slug>.
        call_command("sync_workflows", verbosity=0)

        manager, _ = users.objects.get_or_create(username="manager", defaults={"email": "manager@example.com"})
        _keep_password(manager, password)
        manager.is_staff = False
        manager.save()
        manager.groups.add(
            reviewers, *Group.objects.filter(Q(name__startswith="queue:") | Q(name__startswith="managers:"))
        )

        # A second reviewer, of the support queue only: two people racing on one email review.
        reviewer, _ = users.objects.get_or_create(username="reviewer", defaults={"email": "reviewer@example.com"})
        _keep_password(reviewer, password)
        reviewer.save()
        reviewer.groups.add(reviewers, Group.objects.get_or_create(name="queue:support")[0])

        auditor, _ = users.objects.get_or_create(username="auditor", defaults={"email": "auditor@example.com"})
        _keep_password(auditor, password)
        auditor.is_staff = True
        auditor.is_superuser = False
        auditor.save()
        auditor.groups.set([auditor_group()])

        # The administrator the README's admin steps need (API clients, subscriptions, secrets).
        admin, _ = users.objects.get_or_create(username="admin", defaults={"email": "admin@example.com"})
        _keep_password(admin, password)
        admin.is_staff = True
        admin.is_superuser = True
        admin.is_active = True
        admin.save()

        _demo_api_client()

        secret = os.environ.get("DEMO_WEBHOOK_SECRET")
        for spec in all_specs():
            if spec.chat:
                # It waits for the user's next chat message, which only an AG-UI client sends: no
                # webhook (one left by an older demo is disabled, its deliveries kept).
                WebhookEndpoint.objects.filter(slug=spec.name, workflow=spec.name).update(enabled=False)
                continue
            endpoint, _ = WebhookEndpoint.objects.get_or_create(slug=spec.name, defaults={"workflow": spec.name})
            # Each endpoint its own secret: a delivery captured at one cannot be replayed at another.
            if secret:
                own = endpoint_secret(secret, spec.name)
                WebhookSecret.objects.filter(endpoint=endpoint, label="demo").exclude(secret=own).delete()
                WebhookSecret.objects.get_or_create(endpoint=endpoint, secret=own, defaults={"label": "demo"})
                continue
            # A copy of another endpoint's secret left by an older demo is replaced.
            others = WebhookSecret.objects.filter(endpoint__in=WebhookEndpoint.objects.exclude(pk=endpoint.pk))
            endpoint.secrets.filter(label="demo", secret__in=others.values("secret")).delete()
            if not endpoint.secrets.exists():
                generated_secret = "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()
                WebhookSecret.objects.create(endpoint=endpoint, secret=generated_secret, label="demo")

        seeded = seed_requests() if seed else []

        self.stdout.write("Demo data ready.")
        self.stdout.write("  Reviewer: manager  (every queue, and their manager; inbox at /inbox/)")
        self.stdout.write("  Reviewer: reviewer (the support queue only)")
        self.stdout.write("  Auditor:  auditor  (reads everything in the admin at /admin/)")
        self.stdout.write("  Admin:    admin    (superuser: API clients, subscriptions, webhook secrets at /admin/)")
        self.stdout.write(f"  Password for all of them: {password}   ({origin})")
        for endpoint in WebhookEndpoint.objects.filter(enabled=True):
            self.stdout.write(f"  Webhook: POST /hooks/{endpoint.slug}/  (workflow {endpoint.workflow})")
        self.stdout.write(
            f"  Webhook secret of an endpoint (for curl): {venv_python()} manage.py webhook_secret email-review"
        )
        for spec in all_specs():
            if spec.chat:
                self.stdout.write(
                    f"  Chat:    POST /agui/{spec.name}/  (AG-UI clients only: it waits for their messages)"
                )
        if os.environ.get("DEMO_API_TOKEN"):
            self.stdout.write("  API: /api/v1/ (docs at /api/v1/docs) with Authorization: Bearer $DEMO_API_TOKEN")
        else:
            self.stdout.write("  API and AG-UI: start with DEMO_API_TOKEN=rc_<a long random token> (the demo client's)")
        if seeded:
            names = ", ".join(session.workflow for session in seeded)
            self.stdout.write(f"  Waiting in the inbox (first run): one request of each kind ({names})")
