"""The inbox websocket in the authorisation matrix: who may connect, and who hears of a new item.

A new email review goes to ``support``: its members, its manager and superusers hear of it; a
reviewer of another queue, the auditor and staff without permissions (no queue) do not; without a
session (anonymous, or an API client's bearer token, which opens no page session) the socket is
refused.
"""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from reviewconsole.asgi import application
from reviewconsole.workflow_sessions.runners import runner_for
from reviewconsole.workflow_sessions.services import session_start
from tests.conftest import COMPLAINT
from tests.personas import PERSONAS, persona_token, persona_user

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 5
HEARS = {
    "reviewer": True,
    "other_reviewer": False,
    "queue_manager": True,
    "auditor": False,
    "staff": False,
    "admin": True,
}


def _headers(persona):
    headers = [(b"origin", b"http://testserver")]
    user = persona_user(persona)
    if user is not None:
        client = Client()
        client.force_login(user)
        headers.append(
            (b"cookie", f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}".encode())
        )
    token = persona_token(persona)
    if token:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    return headers


async def _until_pong(communicator):
    """Every message before the answer to a ping (messages arrive in order)."""
    await communicator.send_json_to({"type": "ping"})
    seen = []
    while True:
        message = await communicator.receive_json_from(timeout=TIMEOUT)
        if message.get("event") == "pong":
            return seen
        seen.append(message)


@pytest.mark.parametrize("persona", PERSONAS)
async def test_the_inbox_socket_for(demo_tx, persona):
    headers = await database_sync_to_async(_headers)(persona)
    communicator = WebsocketCommunicator(application, "/ws/inbox/", headers=headers)
    try:
        connected, code = await communicator.connect(timeout=TIMEOUT)
        if persona not in HEARS:
            assert (connected, code) == (False, 4401)
            return
        assert connected
        await _until_pong(communicator)  # the greeting, if any
        session = await database_sync_to_async(session_start)(
            workflow="email-review", data={"complaint": COMPLAINT}, user_id="test"
        )
        await runner_for("email-review").run_pending(session.id)
        messages = await _until_pong(communicator)
        created = [m for m in messages if m.get("event") == "interrupt.created"]
        assert bool(created) is HEARS[persona], messages
        if created:
            assert created[0]["item"]["session_id"] == session.id
    finally:
        await communicator.disconnect()
        await get_channel_layer().flush()
