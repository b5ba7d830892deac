"""One reader per queue and process (``inbox/live/hub.py``): the queue's group has one member
however many sockets watch it, every socket still hears, and the reader comes and goes with them.

Through the real ASGI stack and the in-memory layer, as ``test_consumers.py``.
"""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from reviewconsole.inbox.live import hub
from reviewconsole.inbox.live.messages import group_name
from reviewconsole.inbox.models import Queue
from tests.inbox.test_consumers import TIMEOUT, _login, _start_review, _watching, connect, cookies  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


async def _support() -> int:
    return (await Queue.objects.aget(slug="support")).pk


async def _sockets(connect, cookies, count):  # noqa: F811
    """The manager's socket and ``count - 1`` reviewer logins' (a session each), all on ``support``."""
    sockets = [await _watching(connect, cookies["manager"])]
    for _ in range(count - 1):
        _, _, cookie = await database_sync_to_async(_login)()
        sockets.append(await _watching(connect, cookie))
    return sockets


async def _created(socket, session_id):
    message = await socket.receive_json_from(timeout=TIMEOUT)
    assert (message["event"], message["item"]["session_id"]) == ("interrupt.created", session_id)


async def test_a_queues_group_has_one_member_however_many_sockets_watch_it(cookies, connect):  # noqa: F811
    sockets = await _sockets(connect, cookies, 3)
    support = await _support()

    assert len(get_channel_layer().groups[group_name(support)]) == 1  # the process's reader
    assert hub.members(support) == 3
    session = await _start_review()
    for socket in sockets:
        await _created(socket, session.id)


async def test_the_reader_leaves_the_group_with_the_last_socket_and_a_new_one_starts(cookies, connect):  # noqa: F811
    first, second = await _sockets(connect, cookies, 2)
    support = await _support()
    layer = get_channel_layer()

    await first.disconnect()
    assert len(layer.groups[group_name(support)]) == 1  # the other socket still watches
    await second.disconnect()
    assert not layer.groups.get(group_name(support))
    assert hub.members(support) == 0

    (again,) = await _sockets(connect, cookies, 1)
    session = await _start_review()
    await _created(again, session.id)


async def test_a_socket_that_cannot_be_sent_to_keeps_no_other_from_hearing(cookies, connect):  # noqa: F811
    sockets = await _sockets(connect, cookies, 3)
    (reader,) = [r for r in hub._of_loop().values() if r.queue_id == await _support()]
    broken = next(iter(reader.sockets))

    async def send(**kwargs):
        raise RuntimeError("the socket is closing")

    broken.send = send

    session = await _start_review()
    for socket in sockets[1:]:
        await _created(socket, session.id)


async def test_a_reader_that_loses_the_layer_closes_its_sockets_so_that_they_reconnect(cookies, connect, monkeypatch):  # noqa: F811
    layer = get_channel_layer()
    receive = layer.receive

    async def failing(channel):
        message = await receive(channel)
        if message.get("fail"):
            raise ConnectionError("the layer went away")
        return message

    monkeypatch.setattr(layer, "receive", failing)
    sockets = await _sockets(connect, cookies, 2)
    support = await _support()
    (reader,) = [r for r in hub._of_loop().values() if r.queue_id == support]

    await layer.send(reader.channel, {"type": "inbox.message", "fail": True})
    for socket in sockets:
        assert await socket.receive_output(timeout=TIMEOUT) == {"type": "websocket.close", "code": 4013}
    assert hub.members(support) == 0  # the next socket starts a reader of its own

    (again,) = await _sockets(connect, cookies, 1)
    session = await _start_review()
    await _created(again, session.id)


async def test_the_readers_membership_is_renewed_before_the_layer_expires_it(cookies, connect, monkeypatch):  # noqa: F811
    layer = get_channel_layer()
    monkeypatch.setattr(layer, "group_expiry", 0.2)  # renewed every 0.05 s
    await _sockets(connect, cookies, 1)
    group = layer.groups[group_name(await _support())]
    ((channel, joined),) = group.items()

    async def renewed():
        while group.get(channel, joined) <= joined:
            await asyncio.sleep(0.01)

    await asyncio.wait_for(renewed(), TIMEOUT)


async def test_a_socket_joining_renews_the_membership_a_restarted_layer_forgot(cookies, connect):  # noqa: F811
    """A restarted Redis has no groups: the next socket to join puts the reader back, and hears;
    the sockets already there may have missed messages meanwhile, so they are closed 4013 to
    reconnect and catch up by their hello's versions."""
    (first,) = await _sockets(connect, cookies, 1)
    get_channel_layer().groups.clear()  # what a Redis restart does to the memberships

    (second,) = await _sockets(connect, cookies, 1)
    assert await first.receive_output(timeout=TIMEOUT) == {"type": "websocket.close", "code": 4013}
    session = await _start_review()
    await _created(second, session.id)


async def test_a_membership_found_lost_by_the_periodic_renewal_closes_the_sockets_to_catch_up(
    cookies,  # noqa: F811
    connect,  # noqa: F811
    monkeypatch,
):
    monkeypatch.setattr(hub, "RENEW_EVERY", 0.05)
    sockets = await _sockets(connect, cookies, 2)
    get_channel_layer().groups.clear()  # a Redis restart: no socket joins afterwards

    for socket in sockets:
        assert await socket.receive_output(timeout=TIMEOUT) == {"type": "websocket.close", "code": 4013}


def test_the_reconnect_close_code_is_one_a_server_may_send():
    """Daphne (autobahn) lets a server close a websocket only with 1000 or 3000-4999: it refused
    1013, and a socket told to reconnect stayed open, hearing nothing
    (tests/scaleout/test_restarts.py found it)."""
    from autobahn.websocket.protocol import WebSocketProtocol

    from reviewconsole.inbox.live.consumers import NO_ACCESS, SIGNED_OUT, TRY_AGAIN

    for code in (TRY_AGAIN, SIGNED_OUT, NO_ACCESS):
        assert code == WebSocketProtocol.CLOSE_STATUS_CODE_NORMAL or 3000 <= code <= 4999
