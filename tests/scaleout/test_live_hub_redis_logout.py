"""The live push over Redis: a logout of one of a user's two sessions, with a
message published right after it through the process's sender thread, as a page's logout and a
worker's commit would; every membership gone once the sockets are.

Needs the Redis of ``REDIS_URL`` (marker ``scaleout``), as ``test_live_hub_redis.py``.
"""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async

from reviewconsole import group_sender
from reviewconsole.inbox.live import hub
from reviewconsole.inbox.live.consumers import session_group
from reviewconsole.inbox.live.messages import group_name, publish
from reviewconsole.inbox.models import Queue
from tests.inbox.test_consumers import TIMEOUT, _login, _watching, opened_sockets
from tests.scaleout.test_live_hub_redis import PREFIX, _members, on_redis  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.scaleout]


@pytest.fixture
async def connect(on_redis):  # noqa: F811
    """``test_consumers.opened_sockets``, emptying Redis with a client of its own afterwards: the
    layer's ``flush`` would close the sender thread's pool from this loop."""
    async with opened_sockets() as open_socket:
        yield open_socket
    on_redis.flushdb()


def _message(queue: int, n: int) -> dict:
    body = {"event": "interrupt.claimed", "queue": queue, "version": n, "item": None}
    return {"type": "inbox.message", "queue": queue, "text": json.dumps(body)}


async def test_a_logout_closes_its_session_only_before_the_next_message_on_redis(demo_tx, on_redis, connect):  # noqa: F811
    support = (await Queue.objects.aget(slug="support")).pk
    _, client, cookie = await database_sync_to_async(_login)()
    _, _, other_cookie = await database_sync_to_async(_login)()  # the same reviewer on another device
    leaving = await _watching(connect, cookie)
    staying = await _watching(connect, other_cookie)
    key = client.session.session_key

    def logout_then_a_message():
        client.logout()  # through the sender thread, as every send on Redis
        publish(group_name(support), _message(support, 7))
        assert group_sender.drain(TIMEOUT)

    await database_sync_to_async(logout_then_a_message)()

    assert await leaving.receive_output(timeout=TIMEOUT) == {"type": "websocket.close", "code": 4401}
    assert (await staying.receive_json_from(timeout=TIMEOUT))["version"] == 7
    await leaving.disconnect()
    assert hub.members(support) == 1
    await staying.disconnect()
    assert hub.members(support) == 0
    assert await database_sync_to_async(_members)(on_redis, support) == 0
    session_members = await database_sync_to_async(on_redis.zcard)(f"{PREFIX}:group:{session_group(key)}")
    assert session_members == 0
