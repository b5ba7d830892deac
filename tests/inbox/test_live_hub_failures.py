"""The live push after its rework (``inbox/live/hub.py``, ``sender.py``, ``consumers.py``,
``access.py``): access checks that fail or take long, bursts over several queues, a layer that
fails a discard, a ping that fails, a logout during connect.

Through the real ASGI stack and the in-memory layer, as ``test_live_hub_races.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
from types import SimpleNamespace

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.db import OperationalError

from reviewconsole.asgi import application
from reviewconsole.inbox.live import access, consumers, hub
from reviewconsole.inbox.live.messages import group_name
from tests.inbox.test_consumers import (  # noqa: F401
    TIMEOUT,
    _login,
    _watching,
    cookies,
    recheck_every_message,
)
from tests.inbox.test_live_hub_races import _message, _queue, _until, connect  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


def _reader(queue_id: int):
    (reader,) = [r for r in hub._of_loop().values() if r.queue_id == queue_id]
    return reader


async def _remove_from(user, group_name_: str) -> None:
    from django.contrib.auth.models import Group

    group = await Group.objects.aget(name=group_name_)
    await database_sync_to_async(user.groups.remove)(group)


# Failed before: an access check that fails (the database locked or away) lets the message through. The
# reader gathers the stale sockets' checks with return_exceptions=True and then offers the message
# to every stale socket, checked or not: a reviewer removed from the queue hears it (fail-open).
async def test_a_check_that_fails_does_not_let_a_removed_reviewer_hear(
    demo_tx,
    connect,  # noqa: F811
    recheck_every_message,  # noqa: F811
    monkeypatch,
):
    support = await _queue("support")
    user, _, cookie = await database_sync_to_async(_login)()
    socket = await _watching(connect, cookie)
    await _remove_from(user, "queue:support")
    failed = []
    check_all = access._check_all

    def failing_once(logins):
        if not failed:
            failed.append(logins)
            raise OperationalError("database is locked")
        return check_all(logins)

    monkeypatch.setattr(access, "_check_all", failing_once)
    await get_channel_layer().group_send(group_name(support), _message(support, 1))
    await _until(lambda: failed and access._batches[asyncio.get_running_loop()].job is None)
    await socket.send_json_to({"type": "ping"})  # its check succeeds: the socket is closed 4403

    first = await socket.receive_output(timeout=TIMEOUT)
    assert first["type"] == "websocket.close", f"a removed reviewer heard {first}"


# Failed before: a socket's check is trusted from when its answer came back, not from when it was read:
# a check that took long (a busy thread pool, a slow database) extends the trust window by its
# own duration. Here the check reads, the reviewer is removed, and the answer comes 10 s (of the
# consumers' clock) later: a message published 11 s after the removal still reaches the socket.
async def test_the_trust_window_counts_from_the_read_not_from_the_answer(demo_tx, connect, monkeypatch):  # noqa: F811
    support = await _queue("support")
    clock = SimpleNamespace(now=1000.0)
    monkeypatch.setattr(consumers, "time", SimpleNamespace(monotonic=lambda: clock.now))
    user, _, cookie = await database_sync_to_async(_login)()
    socket = await _watching(connect, cookie)
    check_all = access._check_all
    checks = []

    def slow_check(logins):
        found = check_all(logins)  # read while the reviewer is still in the queue
        if not checks:
            user.groups.remove(user.groups.get(name="queue:support"))  # removed at 1003
            clock.now += 10  # the answer comes back at 1013
        checks.append(found)
        return found

    monkeypatch.setattr(access, "_check_all", slow_check)
    clock.now += 3  # the connect's check is stale now (ACCESS_RECHECK_SECONDS: 2)
    layer = get_channel_layer()
    await layer.group_send(group_name(support), _message(support, 1))
    assert (await socket.receive_json_from(timeout=TIMEOUT))["version"] == 1  # published before the removal
    clock.now += 1  # 1014: 11 s after the removal, 11 s after the check read

    await layer.group_send(group_name(support), _message(support, 2))

    out = await socket.receive_output(timeout=TIMEOUT)
    assert out == {"type": "websocket.close", "code": 4403}, f"heard 11 s after the removal: {out}"


# Failed before: the sender's overflow closes a socket that keeps up. The limit counts the frames offered
# before the socket's send task had a turn, not the frames the client is behind: two queues'
# readers each hand over a burst in one loop turn (60 + 60 messages, each queue's reader within
# its channel's capacity of 100) and the manager's socket, whose client reads everything at once,
# is closed 4013 before a single frame was sent.
async def test_a_burst_over_two_queues_does_not_close_a_socket_that_keeps_up(cookies, connect):  # noqa: F811
    support, finance = await _queue("support"), await _queue("finance")
    socket = await _watching(connect, cookies["manager"])  # the manager watches every queue
    layer = get_channel_layer()
    for n in range(60):
        await layer.group_send(group_name(support), _message(support, n))
        await layer.group_send(group_name(finance), _message(finance, n))

    got = []
    for _ in range(120):
        out = await socket.receive_output(timeout=TIMEOUT)
        assert out["type"] == "websocket.send", f"closed after {len(got)} frames: {out}"
        got.append(out)


# Failed before: a socket (and its queue's reader) is left in the hub when the layer fails one discard
# (a Redis connection broken by a restart fails its next command): ``disconnect`` (and ``_leave``,
# which drops every queue from ``queue_ids`` first) leaves the queues one by one and the first
# failure ends it. The other queue's reader keeps the dead socket, and its group membership, for
# the life of the process; the failed reader's channel stays in its group too.
async def test_a_failed_discard_leaves_no_socket_in_the_other_queues_reader(demo_tx, monkeypatch):
    support, finance = await _queue("support"), await _queue("finance")
    _, _, cookie = await database_sync_to_async(_login)(also=["queue:finance"])
    headers = [(b"origin", b"http://testserver"), (b"cookie", cookie.encode())]
    socket = WebsocketCommunicator(application, "/ws/inbox/", headers=headers)
    assert (await socket.connect(timeout=TIMEOUT))[0]
    assert (await socket.receive_json_from(timeout=TIMEOUT))["event"] == "hello"
    layer = get_channel_layer()
    discard, failed = layer.group_discard, []

    async def failing_once(group, channel):
        if not failed:
            failed.append(group)
            raise ConnectionError("Redis restarted")
        await discard(group, channel)

    monkeypatch.setattr(layer, "group_discard", failing_once)
    try:
        with contextlib.suppress(ConnectionError):
            await socket.disconnect()
        assert failed
        assert (hub.members(support), hub.members(finance)) == (0, 0), hub._of_loop()
    finally:
        monkeypatch.undo()
        for reader in list(hub._of_loop().values()):
            for left in list(reader.sockets):
                await hub.leave(left, reader.queue_id)
        await layer.flush()


# Failed before: a logout told while the socket connects (after it joined its queues, before its hello)
# closes it 4401, and then connect() goes on: it accepts the closed socket and sends its hello.
async def test_a_logout_during_connect_sends_nothing_after_the_close(demo_tx, monkeypatch):
    import threading

    from reviewconsole import group_sender

    support = await _queue("support")
    _, client, cookie = await database_sync_to_async(_login)()
    logged_out = threading.Event()
    versions = consumers.current_versions

    def after_the_logout(queue_ids):
        logged_out.wait(TIMEOUT)  # connect() reads the versions while the page logs out
        return versions(queue_ids)

    monkeypatch.setattr(consumers, "current_versions", after_the_logout)
    headers = [(b"origin", b"http://testserver"), (b"cookie", cookie.encode())]
    socket = WebsocketCommunicator(application, "/ws/inbox/", headers=headers)
    group_sender.bind_loop(asyncio.get_running_loop())
    try:
        await socket.send_input({"type": "websocket.connect"})
        await _until(lambda: hub.members(support) == 1)  # joined; connect() now reads the versions
        await database_sync_to_async(client.logout)()
        await _until(lambda: hub.members(support) == 0)  # the reader closed it
        logged_out.set()
        first = await socket.receive_output(timeout=TIMEOUT)
        assert first == {"type": "websocket.close", "code": 4401}
        assert await socket.receive_nothing(), "sent after the close"
    finally:
        logged_out.set()
        group_sender.bind_loop(None)
        with contextlib.suppress(BaseException):
            await socket.disconnect()
        await get_channel_layer().flush()
    assert hub.members(support) == 0


async def test_a_socket_whose_client_stops_reading_is_closed_4013(cookies, connect):  # noqa: F811
    """(The overflow still does its job.) One frame stuck in the send (the client's TCP window is
    full) and 100 waiting: the next one closes the socket, and the other socket still hears."""
    support = await _queue("support")
    _, _, cookie = await database_sync_to_async(_login)()
    stuck = await _watching(connect, cookie)
    other = await _watching(connect, cookies["manager"])
    slow = next(iter(_reader(support).sockets))
    drained = asyncio.Event()

    async def send(**kwargs):
        await drained.wait()

    slow.send = send
    layer = get_channel_layer()
    try:
        await layer.group_send(group_name(support), _message(support, 0))
        await _until(lambda: slow.sender._task is not None and not slow.sender._waiting)  # in the send
        for n in range(1, 101):
            await layer.group_send(group_name(support), _message(support, n))
        await _until(lambda: len(slow.sender._waiting) == 100)
        assert not slow.gone
        await layer.group_send(group_name(support), _message(support, 101))

        assert await stuck.receive_output(timeout=TIMEOUT) == {"type": "websocket.close", "code": 4013}
        got = [(await other.receive_json_from(timeout=TIMEOUT))["version"] for _ in range(102)]
        assert got == list(range(102))
    finally:
        drained.set()


# Failed before: a ping whose versions cannot be read (the database locked or away) ends the consumer
# with the error, and Channels calls no disconnect() for a consumer that raised: the socket stays in
# its queue's reader (offered every message, checked again) and in its session's group for the
# life of the process.
async def test_a_ping_that_fails_leaves_no_socket_in_the_hub(demo_tx, monkeypatch):
    support = await _queue("support")
    _, _, cookie = await database_sync_to_async(_login)()
    headers = [(b"origin", b"http://testserver"), (b"cookie", cookie.encode())]
    socket = WebsocketCommunicator(application, "/ws/inbox/", headers=headers)
    assert (await socket.connect(timeout=TIMEOUT))[0]
    assert (await socket.receive_json_from(timeout=TIMEOUT))["event"] == "hello"

    def failing(queue_ids):
        raise OperationalError("database is locked")

    monkeypatch.setattr(consumers, "current_versions", failing)
    try:
        await socket.send_json_to({"type": "ping"})
        with pytest.raises(OperationalError):
            await socket.wait(timeout=TIMEOUT)  # the application ends with the error
        assert hub.members(support) == 0
        assert not [g for g, members in get_channel_layer().groups.items() if members], get_channel_layer().groups
    finally:
        for reader in list(hub._of_loop().values()):
            for left in list(reader.sockets):
                await hub.leave(left, reader.queue_id)
        await get_channel_layer().flush()


# Failed before (as the access re-check's): the connect's own check is trusted from after the queues were
# read, so a slow read stretches the trust window: the reviewer removed while connect reads its
# queues 10 s (of the consumers' clock) long still hears a message 11 s after the removal.
async def test_the_connects_trust_window_counts_from_the_read(demo_tx, connect, monkeypatch):  # noqa: F811
    support = await _queue("support")
    clock = SimpleNamespace(now=1000.0)
    monkeypatch.setattr(consumers, "time", SimpleNamespace(monotonic=lambda: clock.now))
    user, _, cookie = await database_sync_to_async(_login)()
    queues_for = consumers.queues_for

    def slow_read(of):
        found = list(queues_for(of))  # read while the reviewer is still in the queue
        user.groups.remove(user.groups.get(name="queue:support"))  # removed at 1000
        clock.now += 10  # the read comes back at 1010
        return found

    monkeypatch.setattr(consumers, "queues_for", slow_read)
    socket = await _watching(connect, cookie)
    clock.now += 1  # 1011: 11 s after the removal

    await get_channel_layer().group_send(group_name(support), _message(support, 1))

    out = await socket.receive_output(timeout=TIMEOUT)
    assert out == {"type": "websocket.close", "code": 4403}, f"heard 11 s after the removal: {out}"
