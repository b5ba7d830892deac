"""One cross-loop sender (issue 13): only ``reviewconsole/group_sender.py`` sends group messages.

Every other module (the inbox's live push, AG-UI's run progress, a logout closing sockets) calls
``group_sender.send`` / ``submit``; a ``group_send`` anywhere else, awaited, wrapped in
``async_to_sync`` or handed to a loop, is a second way of doing it.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SENDER = "reviewconsole/group_sender.py"


def group_sends(path: str, source: str) -> list[str]:
    """``["path:line"]`` of every mention of ``group_send`` in ``source`` (attribute or name)."""
    found = []
    for node in ast.walk(ast.parse(source, path)):
        name = {ast.Attribute: "attr", ast.Name: "id", ast.alias: "name"}.get(type(node))
        if name and str(getattr(node, name)).split(".")[-1] == "group_send":
            found.append(f"{path}:{node.lineno}")  # type: ignore[attr-defined]
    return found


def test_only_the_sender_sends_group_messages():
    found = []
    for package in ("reviewconsole", "engine"):
        for module in sorted((ROOT / package).rglob("*.py")):
            path = module.relative_to(ROOT).as_posix()
            if path != SENDER:
                found += group_sends(path, module.read_text(encoding="utf-8"))
    assert found == [], f"send through {SENDER} (group_sender.send) instead: {found}"


def test_the_sender_itself_is_found_by_the_scan():
    assert group_sends(SENDER, (ROOT / SENDER).read_text(encoding="utf-8")), "the scan no longer sees group_send"


def test_the_scan_finds_each_way_of_sending():
    source = """
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

def push(group, message):
    async_to_sync(get_channel_layer().group_send)(group, message)

async def apush(layer, group, message):
    await layer.group_send(group, message)
    send = layer.group_send
    asyncio.run_coroutine_threadsafe(self.channel_layer.group_send(group, message), loop)
"""
    assert sorted(group_sends("inbox/x.py", source), key=lambda where: int(where.split(":")[1])) == [
        "inbox/x.py:6",
        "inbox/x.py:9",
        "inbox/x.py:10",
        "inbox/x.py:11",
    ]
