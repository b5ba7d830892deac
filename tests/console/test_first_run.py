"""The first run (issue 17): the demo's seeded requests, the webhook secret for the README's curl,
the endpoints named when one is unknown, and what a wrong API token is told.

The same, served and from a shell (curl, node), is ``test_first_run_served.py``.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from reviewconsole.audit.models import AuditEntry
from reviewconsole.console.seed import SEED_USER_ID, SEEDS
from reviewconsole.hooks.models import WebhookEndpoint
from reviewconsole.inbox.items.actions import request_kind
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import WorkflowSession
from tests.conftest import DEMO_SECRET
from tests.console.test_readme_examples import EXAMPLES


def _demo(*args: str) -> str:
    out = io.StringIO()
    call_command("demo", *args, stdout=out)
    return out.getvalue()


def test_the_seed_leaves_one_request_of_each_kind_waiting_once(demo, on_commit):
    with on_commit():
        printed = _demo("--seed")
    pending = Item.objects.filter(status="pending").select_related("queue")
    by_workflow = {item.workflow: item for item in pending}
    assert sorted(by_workflow) == sorted(w for w, _ in SEEDS) and pending.count() == len(SEEDS)
    # One of each kind: a draft, a confirmation, a tool call's approval, a structured form.
    kinds = {workflow: request_kind(item) for workflow, item in by_workflow.items()}
    assert kinds == {
        "email-review": "email_draft",
        "vip-discount": "vip_discount",
        "refund-approval": "refund",
        "incident-triage": "incident_triage",
    }
    assert {item.queue.slug for item in pending} == {"support", "sales", "finance", "operations"}
    assert set(WorkflowSession.objects.values_list("user_id", flat=True)) == {SEED_USER_ID}
    assert AuditEntry.objects.filter(action="session.start", actor="demo").count() == len(SEEDS)
    assert "one request of each kind" in printed

    with on_commit():  # a restart: nothing new
        again = _demo("--seed")
    assert WorkflowSession.objects.count() == len(SEEDS)
    assert "one request of each kind" not in again


def test_the_seed_uses_the_readme_s_examples():
    assert {workflow: data for workflow, data in SEEDS} == {w: data for w, (_, data) in EXAMPLES.items()}


def test_a_database_people_used_is_not_seeded(start_review, on_commit):
    start_review()
    with on_commit():
        _demo("--seed")
    assert WorkflowSession.objects.count() == 1


def test_without_seed_the_demo_starts_nothing(demo, on_commit):
    with on_commit():
        _demo()
    assert not WorkflowSession.objects.exists()


def test_webhook_secret_prints_the_endpoint_s_secret_alone(demo):
    out = io.StringIO()
    call_command("webhook_secret", "email-review", stdout=out)
    assert out.getvalue() == DEMO_SECRET + "\n"


def test_the_demo_names_the_command_that_prints_the_secret(demo):
    assert "manage.py webhook_secret email-review" in _demo()


@pytest.mark.parametrize("command", ["send_webhook", "webhook_secret"])
def test_an_unknown_endpoint_lists_those_that_exist(demo, command):
    args = ["--data", "{}"] if command == "send_webhook" else []
    with pytest.raises(CommandError) as refused:
        call_command(command, "nope", *args, stdout=io.StringIO())
    message = str(refused.value)
    assert message.startswith("No webhook endpoint 'nope'. The endpoints are: ")
    for slug in WebhookEndpoint.objects.filter(enabled=True).values_list("slug", flat=True):
        assert slug in message
    assert "manage.py demo" not in message


def test_with_no_endpoint_at_all_it_says_how_to_make_them(db):
    with pytest.raises(CommandError, match=r"there is none yet: run `\S*python\S* manage\.py demo`"):
        call_command("webhook_secret", "email-review", stdout=io.StringIO())


WRONG = {"Authorization": "Bearer rc_not-a-token-anyone-has"}


@pytest.mark.parametrize(
    ("headers", "says"),
    [
        (WRONG, "The API token is wrong"),
        ({}, "Send an API token"),
        ({"Authorization": "Basic dXNlcjpwYXNz"}, "must be 'Bearer <token>'"),
    ],
)
def test_the_api_and_ag_ui_say_what_is_wrong_with_the_token(demo, client, headers, says):
    api = client.get("/api/v1/interrupts", headers=headers)
    agui = client.post("/agui/email-review/", json.dumps({}), content_type="application/json", headers=headers)
    for response in (api, agui):
        assert response.status_code == 401
        error = response.json()["error"]
        assert error["code"] == "unauthorized"
        assert says in error["message"]
