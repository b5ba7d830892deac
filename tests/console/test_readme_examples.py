"""The README's example webhook per demo workflow starts a session that waits in the inbox."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import WorkflowSession
from reviewconsole.workflows import all_specs
from tests.conftest import post_webhook

README = Path(__file__).resolve().parents[2] / "README.md"
# A row of the "Send a webhook" table: | `workflow` (queue) | `{json}` | what waits |
ROW = re.compile(r"^\| `(?P<workflow>[a-z-]+)` \((?P<queue>[a-z-]+)\) \| `(?P<data>\{.*?\})` \|", re.MULTILINE)
EXAMPLES = {m["workflow"]: (m["queue"], json.loads(m["data"])) for m in ROW.finditer(README.read_text("utf-8"))}


def test_every_demo_webhook_has_an_example():
    assert set(EXAMPLES) == {spec.name for spec in all_specs() if not spec.chat}


@pytest.mark.parametrize("workflow", sorted(EXAMPLES))
def test_the_example_leaves_a_request_in_its_queue(demo, client, on_commit, workflow):
    queue, data = EXAMPLES[workflow]
    with on_commit():
        response = post_webhook(client, data, slug=workflow)
    assert response.status_code == 202, response.content
    session = WorkflowSession.objects.get(pk=response.json()["session_id"])
    assert session.status == "waiting"
    items = Item.objects.filter(session_id=session.pk, status="pending")
    assert [item.queue.slug for item in items] == [queue]
