"""``manage.py workflows`` (the registered workflows) and ``manage.py sync_workflows`` (their queues)."""

from __future__ import annotations

import io
import json

from django.contrib.auth.models import Group
from django.core.management import call_command

from reviewconsole.hooks.models import WebhookEndpoint
from reviewconsole.inbox.models import Queue
from reviewconsole.workflow_sessions.models import WorkflowSession


def _run(*args):
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_workflows_lists_each_with_its_endpoints_and_paused_sessions_per_version(demo, start_session):
    start_session("incident-triage", {"title": "Checkout down"})
    start_session("incident-triage", {"title": "Login down"})
    WorkflowSession.objects.create(workflow="incident-triage", workflow_version="0", user_id="t", status="waiting")
    WebhookEndpoint.objects.filter(slug="vip-discount").update(enabled=False)

    rows = {r["name"]: r for r in json.loads(_run("workflows", "--json"))["workflows"]}
    assert sorted(rows) == ["email-review", "incident-triage", "refund-approval", "support-handoff", "vip-discount"]
    assert rows["incident-triage"] == {
        "name": "incident-triage",
        "title": "Incident triage",
        "version": "1",
        "module": "reviewconsole.demo",
        "queue": "operations",
        "model": "default",
        "webhook_endpoints": [{"slug": "incident-triage", "enabled": True}],
        "paused_sessions": {"0": 1, "1": 2},
    }
    assert rows["support-handoff"]["webhook_endpoints"] == []
    assert rows["vip-discount"]["webhook_endpoints"] == [{"slug": "vip-discount", "enabled": False}]

    table = _run("workflows").splitlines()
    assert table[0].split() == [
        "name",
        "title",
        "version",
        "module",
        "queue",
        "model",
        "webhook",
        "endpoints",
        "paused",
        "sessions",
    ]
    [triage] = [line for line in table if line.startswith("incident-triage ")]
    assert triage.split("  ")[0] == "incident-triage"
    assert "reviewconsole.demo" in triage and "operations" in triage and triage.endswith("v0: 1, v1: 2")
    [vip] = [line for line in table if line.startswith("vip-discount ")]
    assert "vip-discount (disabled)" in vip


def test_a_root_that_is_an_agent_has_the_runners_version_none_in_the_table(demo, start_session):
    """refund-approval's root is an agent: the engine's Runner stores "" as its sessions' version
    (a Workflow root's default is "1"); the table says "none" in both columns, not "-" and "v?"."""
    from engine import Runner
    from reviewconsole.workflows import get

    start_session("refund-approval", {"order_id": "o-1", "amount": 900, "reason": "Damaged"})
    runner_version = Runner(get("refund-approval").build(None)).version
    rows = {r["name"]: r for r in json.loads(_run("workflows", "--json"))["workflows"]}
    assert rows["refund-approval"]["version"] == runner_version == ""
    assert rows["incident-triage"]["version"] == "1"
    stored = set(WorkflowSession.objects.filter(workflow="refund-approval").values_list("workflow_version", flat=True))
    assert stored <= {runner_version}
    [refund] = [line for line in _run("workflows").splitlines() if line.startswith("refund-approval ")]
    cells = [c.strip() for c in refund.split("  ") if c.strip()]
    assert cells[2] == "none"
    if rows["refund-approval"]["paused_sessions"]:
        assert refund.endswith(f"none: {rows['refund-approval']['paused_sessions']['']}")


def test_workflows_names_endpoints_whose_workflow_is_not_registered(demo):
    WebhookEndpoint.objects.create(slug="old-orders", workflow="retired-orders")
    listing = json.loads(_run("workflows", "--json"))
    assert listing["unregistered_endpoints"] == [{"slug": "old-orders", "workflow": "retired-orders"}]
    assert (
        "Webhook endpoint old-orders names 'retired-orders', which is not registered "
        "(it answers 404 unknown_workflow)." in _run("workflows")
    )


def test_workflows_with_none_registered_says_how_to_register(db, settings):
    settings.REVIEWCONSOLE = {**settings.REVIEWCONSOLE, "WORKFLOWS": []}
    assert json.loads(_run("workflows", "--json")) == {"workflows": [], "unregistered_endpoints": []}
    assert "No workflows registered: name modules in REVIEWCONSOLE_WORKFLOWS." in _run("workflows")


def test_sync_workflows_creates_each_queue_and_its_groups_once(db):
    first = _run("sync_workflows")
    assert "Queue finance: created (reviewers queue:finance, managers managers:finance)" in first
    expected = ["finance", "operations", "sales", "support", "support-leads", "triage"]
    assert sorted(Queue.objects.values_list("slug", flat=True)) == expected
    finance = Queue.objects.get(slug="finance")
    assert (finance.name, finance.group.name, finance.managers.name) == ("Finance", "queue:finance", "managers:finance")

    finance.name = "Money"
    finance.save()
    groups = Group.objects.count()
    second = _run("sync_workflows")
    assert "Queue finance: exists" in second and "created" not in second
    assert Queue.objects.count() == len(expected) and Group.objects.count() == groups
    assert Queue.objects.get(slug="finance").name == "Money"  # what exists is left as it is


def test_sync_workflows_gives_a_queue_without_managers_its_managers_group(db):
    reviewers = Group.objects.create(name="queue:sales")
    Queue.objects.create(slug="sales", name="Sales", group=reviewers)
    _run("sync_workflows")
    assert Queue.objects.get(slug="sales").managers.name == "managers:sales"
