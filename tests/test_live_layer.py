"""The embedded default's in-memory channel layer walks its channels to expire old messages at
most once a second (``reviewconsole/live_layer.py``), and still expires them."""

from __future__ import annotations

from channels.layers import InMemoryChannelLayer as ChannelsLayer

from reviewconsole.live_layer import CLEAN_EVERY, InMemoryChannelLayer


async def test_the_expiry_walk_runs_at_most_once_a_second(monkeypatch):
    layer = InMemoryChannelLayer()
    walks = []
    monkeypatch.setattr(ChannelsLayer, "_clean_expired", lambda self: walks.append(1))
    for _ in range(50):
        await layer.send("inbox!one", {"type": "inbox.message"})
        assert await layer.receive("inbox!one") == {"type": "inbox.message"}
    assert len(walks) == 1
    layer._cleaned_at -= CLEAN_EVERY  # a second later
    await layer.group_send("queue.1", {"type": "inbox.message"})
    assert len(walks) == 2


async def test_an_expired_message_still_expires_and_leaves_its_groups():
    layer = InMemoryChannelLayer(expiry=0)
    await layer.group_add("queue.1", "inbox!one")
    await layer.send("inbox!one", {"type": "inbox.message"})
    layer._cleaned_at -= CLEAN_EVERY
    layer._clean_expired()
    assert "inbox!one" not in layer.channels
    assert "inbox!one" not in layer.groups.get("queue.1", {})


async def test_a_group_message_reaches_every_member_without_a_task_each(monkeypatch):
    import asyncio

    layer = InMemoryChannelLayer(capacity=1)
    for name in ("inbox!one", "inbox!two", "inbox!three"):
        await layer.group_add("queue.1", name)
    await layer.send("inbox!two", {"type": "inbox.message", "n": 0})  # two's queue is full now
    tasks = []
    create_task = asyncio.create_task
    monkeypatch.setattr(asyncio, "create_task", lambda *a, **k: tasks.append(1) or create_task(*a, **k))

    message = {"type": "inbox.message", "n": 1}
    await layer.group_send("queue.1", message)

    assert tasks == []
    assert await layer.receive("inbox!one") == message
    assert await layer.receive("inbox!three") == message
    assert await layer.receive("inbox!two") == {"type": "inbox.message", "n": 0}  # the full one missed it
    assert "inbox!two" not in layer.channels  # nothing else waits there
