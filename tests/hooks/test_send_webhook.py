"""``manage.py send_webhook``: signs with the endpoint's secret and prints the console's answer."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from django.core.management import CommandError, call_command

from reviewconsole.workflow_sessions.models import WorkflowSession
from tests.conftest import COMPLAINT


@pytest.fixture
def through_test_client(client, monkeypatch, on_commit):
    """Send the command's POST to the test client instead of the network; record the URLs."""
    urls = []

    def post(url, *, content, headers):
        urls.append(url)
        with on_commit():
            response = client.post(httpx.URL(url).path, content, content_type=headers["content-type"], headers=headers)
        return httpx.Response(response.status_code, content=response.content)

    monkeypatch.setattr(httpx, "post", post)
    return urls


def test_it_signs_sends_and_prints_the_answer(demo, through_test_client):
    out = io.StringIO()
    data = json.dumps({"complaint": COMPLAINT})
    call_command("send_webhook", "email-review", "--data", data, "--url", "http://console.test:8765/", stdout=out)
    answer = json.loads(out.getvalue())
    assert through_test_client == ["http://console.test:8765/hooks/email-review/"]
    session = WorkflowSession.objects.get(pk=answer["session_id"])
    assert session.state["complaint"] == COMPLAINT
    assert session.status == "waiting"


def test_it_reuses_a_given_webhook_id(demo, through_test_client):
    data = json.dumps({"complaint": COMPLAINT})
    outs = [io.StringIO(), io.StringIO()]
    for out in outs:
        call_command("send_webhook", "email-review", "--data", data, "--id", "msg_cli", stdout=out)
    assert json.loads(outs[0].getvalue()) == json.loads(outs[1].getvalue())
    assert WorkflowSession.objects.count() == 1


def test_it_fails_on_a_refusal(demo, through_test_client):
    with pytest.raises(CommandError, match="400"):
        call_command("send_webhook", "email-review", "--data", "{}", stdout=io.StringIO())
    assert WorkflowSession.objects.count() == 0


def test_it_refuses_data_that_is_not_json(demo, through_test_client):
    with pytest.raises(CommandError, match="not valid JSON"):
        call_command("send_webhook", "email-review", "--data", "{nope", stdout=io.StringIO())
    assert through_test_client == []


def test_it_names_an_unknown_endpoint_and_lists_those_that_exist(demo, through_test_client):
    with pytest.raises(
        CommandError, match=r"No webhook endpoint 'nope'\. The endpoints are: .*email-review"
    ) as refused:
        call_command("send_webhook", "nope", "--data", "{}", stdout=io.StringIO())
    assert "manage.py demo" not in str(refused.value)  # they exist: making them again is no advice
    assert through_test_client == []


def test_it_says_a_chat_workflow_is_driven_over_ag_ui(demo, through_test_client):
    """support-handoff has no webhook: it waits for the user's next chat message (AG-UI)."""
    with pytest.raises(CommandError, match=r"support-handoff is a chat.*/agui/support-handoff/"):
        call_command("send_webhook", "support-handoff", "--data", '{"message": "hello"}', stdout=io.StringIO())
    assert through_test_client == []
    assert WorkflowSession.objects.count() == 0


def test_without_the_console_s_database_it_says_where_it_looked(tmp_path):
    """Run with another ``REVIEWCONSOLE_VAR_DIR`` than the console's (an empty one), it used to
    end in a traceback (``no such table``)."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "REVIEWCONSOLE_VAR_DIR": str(tmp_path)}
    env.pop("DATABASE_URL", None)
    done = subprocess.run(
        [sys.executable, "manage.py", "send_webhook", "email-review", "--data", "{}"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert f"No console database at {tmp_path}" in done.stderr and "REVIEWCONSOLE_VAR_DIR" in done.stderr
    assert "Traceback" not in done.stderr
