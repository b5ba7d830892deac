"""The live push's readers over Redis (channels_redis, as on the scale-out stack),
where every membership change is a round trip: a check that makes a socket leave the last queue
its reader serves stops that very reader while the check is still running in it.

Needs the Redis of ``REDIS_URL`` (``bash tools/scaleout-services``; marker ``scaleout``); uses its
database 9, prefix ``hubtest``.
"""

from __future__ import annotations

import json
import os

import pytest
import redis
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from reviewconsole.inbox.live.messages import group_name
from reviewconsole.inbox.models import Queue
from reviewconsole.settings import env
from tests.inbox.test_consumers import (  # noqa: F401
    TIMEOUT,
    _login,
    _watching,
    connect,
    recheck_every_message,
)
from tests.scaleout.conftest import _missing

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.scaleout]


PREFIX = "hubtest"


@pytest.fixture
def on_redis(settings, monkeypatch):
    """The Channels layer on the Redis of ``REDIS_URL`` (its database 9, emptied first)."""
    if not os.environ.get("REDIS_URL"):
        _missing("the live push on Redis needs REDIS_URL; .ci/run sets it")
    url = os.environ["REDIS_URL"].rsplit("/", 1)[0] + "/9"
    client = redis.Redis.from_url(url)
    client.flushdb()  # what an earlier failed test left
    monkeypatch.setenv("REDIS_URL", url)
    monkeypatch.setenv("REVIEWCONSOLE_CHANNELS_PREFIX", PREFIX)
    settings.CHANNEL_LAYERS = env.channel_layers({})
    return client


def _members(client: redis.Redis, queue: int) -> int:
    return client.zcard(f"{PREFIX}:group:{group_name(queue)}")


def _message(queue: int) -> dict:
    body = {"event": "interrupt.claimed", "queue": queue, "version": 1, "item": None}
    return {"type": "inbox.message", "queue": queue, "text": json.dumps(body)}


async def test_a_member_hears_on_redis(demo_tx, on_redis, connect, recheck_every_message):  # noqa: F811
    """the same path for a user still in the queue delivers the message."""
    support = (await Queue.objects.aget(slug="support")).pk
    _, _, cookie = await database_sync_to_async(_login)()
    socket = await _watching(connect, cookie)
    await get_channel_layer().group_send(group_name(support), _message(support))
    assert (await socket.receive_json_from(timeout=TIMEOUT))["queue"] == support


# Failed before the reader shielded its checks: the reviewer's socket is the only one of
# ``support`` here; a message makes the reader check it, the user lost ``support``, so the check
# leaves the queue, which stops the reader, which cancelled the check at its next await (on
# Redis, the group_discard): no 4403, and the reader's channel stayed in the group for a day.
async def test_a_reviewer_left_with_no_queue_is_closed_4403_on_redis(demo_tx, on_redis, connect, recheck_every_message):  # noqa: F811
    from django.contrib.auth.models import Group

    support = (await Queue.objects.aget(slug="support")).pk
    user, _, cookie = await database_sync_to_async(_login)()
    socket = await _watching(connect, cookie)
    assert await database_sync_to_async(_members)(on_redis, support) == 1
    group = await Group.objects.aget(name="queue:support")
    await database_sync_to_async(user.groups.remove)(group)

    await get_channel_layer().group_send(group_name(support), _message(support))

    assert await socket.receive_output(timeout=TIMEOUT) == {"type": "websocket.close", "code": 4403}
    assert await database_sync_to_async(_members)(on_redis, support) == 0


# Failed before, the same way: a deactivated user's socket, the only one of its queue, was not
# closed 4401.
async def test_a_deactivated_users_socket_is_closed_4401_on_redis(demo_tx, on_redis, connect, recheck_every_message):  # noqa: F811
    support = (await Queue.objects.aget(slug="support")).pk
    user, _, cookie = await database_sync_to_async(_login)()
    socket = await _watching(connect, cookie)
    user.is_active = False
    await user.asave(update_fields=["is_active"])

    await get_channel_layer().group_send(group_name(support), _message(support))

    assert await socket.receive_output(timeout=TIMEOUT) == {"type": "websocket.close", "code": 4401}


async def test_a_membership_redis_lost_is_found_and_its_sockets_reconnect(
    demo_tx,
    on_redis,
    connect,  # noqa: F811
    monkeypatch,
):
    """What a Redis restart without persistence does: the reader's membership is gone, and no
    socket joins afterwards. The renewal finds it gone (the group's sorted set, as
    ``channels_redis`` writes it: ``hub._membership`` reads it) and closes the sockets 4013 so
    that their pages reconnect and catch up."""
    from reviewconsole.inbox.live import hub

    monkeypatch.setattr(hub, "RENEW_EVERY", 0.05)
    support = (await Queue.objects.aget(slug="support")).pk
    _, _, cookie = await database_sync_to_async(_login)()
    socket = await _watching(connect, cookie)
    (reader,) = [r for r in hub._of_loop().values() if r.queue_id == support]
    assert await hub._membership(get_channel_layer(), reader.group, reader.channel) is True

    await database_sync_to_async(on_redis.flushdb)()

    assert await socket.receive_output(timeout=TIMEOUT) == {"type": "websocket.close", "code": 4013}
