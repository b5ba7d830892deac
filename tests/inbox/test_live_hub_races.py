"""The one-reader-per-queue live push (``inbox/live/hub.py``): joins and leaves racing
messages, access lost while messages flow, order, bursts, locales.

Through the real ASGI stack and the in-memory layer, as ``test_live_hub.py``.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator

from reviewconsole.asgi import application
from reviewconsole.inbox.live import hub
from reviewconsole.inbox.live.messages import group_name
from reviewconsole.inbox.models import Queue
from tests.inbox.test_consumers import (  # noqa: F401
    TIMEOUT,
    _login,
    _start_review,
    _watching,
    connect,
    cookies,
    recheck_every_message,
)

pytestmark = pytest.mark.django_db(transaction=True)


async def _queue(slug: str) -> int:
    return (await Queue.objects.aget(slug=slug)).pk


def _message(queue: int, n: int) -> dict:
    """A group message as ``messages.group_message`` makes it (``n``: its version)."""
    body = {"event": "interrupt.claimed", "queue": queue, "version": n, "item": None}
    return {"type": "inbox.message", "queue": queue, "text": json.dumps(body)}


async def _until(condition) -> None:
    async def wait():
        while not condition():
            await asyncio.sleep(0)

    await asyncio.wait_for(wait(), TIMEOUT)


# Failed before the sockets' senders (sender.py): the reader sent to a socket that had joined its
# queues but was not accepted yet (connect() joins, reads the versions, then accepts); Daphne
# refuses a send before the accept, so the message was lost. Channels' own dispatch had held it.
async def test_a_message_during_connect_comes_after_the_accept(cookies, connect):  # noqa: F811
    support = await _queue("support")
    await _watching(connect, cookies["manager"])  # the queue has a reader already
    _, _, cookie = await database_sync_to_async(_login)()  # the reviewer: support only
    headers = [(b"origin", b"http://testserver"), (b"cookie", cookie.encode())]
    socket = WebsocketCommunicator(application, "/ws/inbox/", headers=headers)
    try:
        await socket.send_input({"type": "websocket.connect"})
        await _until(lambda: hub.members(support) == 2)  # joined; connect() now reads the versions
        await get_channel_layer().group_send(group_name(support), _message(support, 99))

        first = await socket.receive_output(timeout=TIMEOUT)
        assert first["type"] == "websocket.accept", first
    finally:
        await socket.disconnect()


# Failed before the logout went through every queue's group: a logged-out socket heard a message
# published after the logout (the socket's own channel lost the race to the queue's reader).
async def test_a_message_published_after_a_logout_does_not_reach_the_logged_out_socket(demo_tx, connect):  # noqa: F811
    from reviewconsole import group_sender
    from reviewconsole.inbox.live.messages import publish

    support = await _queue("support")
    _, client, cookie = await database_sync_to_async(_login)()
    socket = await _watching(connect, cookie)

    def logout_then_a_new_item():
        client.logout()  # publishes inbox.signed_out to the session's group
        publish(group_name(support), _message(support, 7))  # committed after the logout

    group_sender.bind_loop(asyncio.get_running_loop())  # as ``serve`` binds Daphne's loop
    try:
        await database_sync_to_async(logout_then_a_new_item)()
        assert await socket.receive_output(timeout=TIMEOUT) == {"type": "websocket.close", "code": 4401}
    finally:
        group_sender.bind_loop(None)


# Failed before connect() cleaned up after itself: a socket whose connect() failed after joining
# its queues (here reading the versions fails, as a database error would) stayed in the readers,
# checked and sent to, for the life of the process (Channels calls no disconnect() then).
async def test_a_socket_whose_connect_fails_halfway_leaves_its_queues(cookies, connect, monkeypatch):  # noqa: F811
    from reviewconsole.inbox.live import consumers

    support = await _queue("support")

    def failing(queue_ids):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(consumers, "current_versions", failing)
    _, _, cookie = await database_sync_to_async(_login)()
    headers = [(b"origin", b"http://testserver"), (b"cookie", cookie.encode())]
    socket = WebsocketCommunicator(application, "/ws/inbox/", headers=headers)
    await socket.send_input({"type": "websocket.connect"})
    with pytest.raises(RuntimeError, match="the database went away"):
        await socket.wait(timeout=TIMEOUT)  # the application ends with the error
    assert hub.members(support) == 0
    assert not get_channel_layer().groups.get(group_name(support))


async def test_per_socket_order_holds_with_fresh_and_stale_sockets_in_a_burst(cookies, connect, settings):  # noqa: F811
    """one socket checked at every message (stale), one trusted (fresh): both hear the
    100 messages of a burst (the layer's capacity) in publish order."""
    support = await _queue("support")
    fresh = await _watching(connect, cookies["manager"])
    _, _, cookie = await database_sync_to_async(_login)()
    stale = await _watching(connect, cookie)
    (reader,) = [r for r in hub._of_loop().values() if r.queue_id == support]
    sockets = list(reader.sockets)
    sockets[1].needs_check = lambda: True  # the reviewer's: checked again before every message
    layer = get_channel_layer()
    for n in range(100):
        await layer.group_send(group_name(support), _message(support, n))
    for socket in (fresh, stale):
        got = [(await socket.receive_json_from(timeout=TIMEOUT))["version"] for _ in range(100)]
        assert got == list(range(100))


async def test_a_socket_joining_while_the_last_one_leaves_hears_the_next_message(cookies, connect):  # noqa: F811
    """the last socket's leave and a new socket's join interleaved on the loop."""
    support = await _queue("support")
    _, _, cookie = await database_sync_to_async(_login)()
    first = await _watching(connect, cookie)
    _, _, other = await database_sync_to_async(_login)()
    leaving = asyncio.ensure_future(first.disconnect())
    joining = asyncio.ensure_future(_watching(connect, other))
    await leaving
    second = await joining
    assert hub.members(support) == 1
    assert len(get_channel_layer().groups[group_name(support)]) == 1
    session = await _start_review()
    message = await second.receive_json_from(timeout=TIMEOUT)
    assert (message["event"], message["item"]["session_id"]) == ("interrupt.created", session.id)


# Failed before the sockets' senders (sender.py): a socket whose send waits (a client that stops
# reading; uvicorn's websockets implementation awaits the drain) held up the queue's reader, so
# no other socket of the queue heard anything.
async def test_a_socket_that_is_slow_to_send_to_keeps_no_other_from_hearing(cookies, connect):  # noqa: F811
    support = await _queue("support")
    _, _, cookie = await database_sync_to_async(_login)()
    await _watching(connect, cookie)  # the slow one: first in the reader's sockets
    other = await _watching(connect, cookies["manager"])
    (reader,) = [r for r in hub._of_loop().values() if r.queue_id == support]
    slow = next(iter(reader.sockets))
    drained = asyncio.Event()

    async def send(**kwargs):
        await drained.wait()  # the client's TCP window is full

    slow.send = send
    try:
        await get_channel_layer().group_send(group_name(support), _message(support, 1))
        assert (await other.receive_json_from(timeout=TIMEOUT))["version"] == 1
    finally:
        drained.set()


async def test_each_socket_gets_the_text_of_its_readers_locale(cookies, connect):  # noqa: F811
    """a German reader gets the ``de-DE`` text, the manager (no locale saved) ``text``."""
    from reviewconsole.preferences.models import Preference

    support = await _queue("support")
    user, _, cookie = await database_sync_to_async(_login)()
    await Preference.objects.aupdate_or_create(user=user, defaults={"locale": "de-DE"})
    german = await _watching(connect, cookie)
    english = await _watching(connect, cookies["manager"])
    message = {**_message(support, 3), "texts": {"de-DE": json.dumps({"version": 3, "lang": "de"})}}
    await get_channel_layer().group_send(group_name(support), message)
    assert (await german.receive_json_from(timeout=TIMEOUT)).get("lang") == "de"
    assert "lang" not in await english.receive_json_from(timeout=TIMEOUT)


async def test_a_user_in_two_queues_hears_both_and_each_in_order(demo_tx, connect):  # noqa: F811
    """one socket, two queues' readers; a message of each, interleaved."""
    support, finance = await _queue("support"), await _queue("finance")
    _, _, cookie = await database_sync_to_async(_login)(also=["queue:finance"])
    socket = await _watching(connect, cookie)
    layer = get_channel_layer()
    for n in range(5):
        await layer.group_send(group_name(support), _message(support, n))
        await layer.group_send(group_name(finance), _message(finance, n))
    got = [await socket.receive_json_from(timeout=TIMEOUT) for _ in range(10)]
    assert [m["version"] for m in got if m["queue"] == support] == list(range(5))
    assert [m["version"] for m in got if m["queue"] == finance] == list(range(5))


async def test_a_burst_over_the_layers_capacity_drops_the_tail_only(cookies, connect):  # noqa: F811
    """(As documented: at most once, a page catches up by versions): 150 messages published
    at once to a queue's reader, whose channel holds 100; the socket hears the first 100 in order
    and then the next message after the burst, whose version shows the gap."""
    support = await _queue("support")
    socket = await _watching(connect, cookies["manager"])
    layer = get_channel_layer()
    for n in range(150):
        await layer.group_send(group_name(support), _message(support, n))
    got = [(await socket.receive_json_from(timeout=TIMEOUT))["version"] for _ in range(100)]
    assert got == list(range(100))
    await layer.group_send(group_name(support), _message(support, 150))
    assert (await socket.receive_json_from(timeout=TIMEOUT))["version"] == 150
