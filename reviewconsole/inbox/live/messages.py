"""Live updates: tell each queue's Channels group what changed, with the queue's version.

A group message (``type: "inbox.message"``) carries ``queue`` (its id) and ``text``, the JSON the
sockets forward as it is (made once for every socket), of an object with ``event`` (``interrupt.created``,
``interrupt.claimed``, ``interrupt.unclaimed``, ``interrupt.resolved``, ``interrupt.cancelled``,
``interrupt.expired``, ``interrupt.escalated``), ``queue`` (its id), ``version`` (the queue's
version after this change, see ``changes.py``) and ``item``, the item's summary as it is when
the message is sent (``serializers.list_entry``); an ``interrupt.created`` of a waiting item also
``row``, its row as the waiting list renders it (``pages.rows.render_row``, times in the zone
active where the message is built: UTC for the socket), so a list shows a new request at once,
before the snapshot it then re-reads. The websocket consumer forwards them to reviewers of that queue only.

Sending goes through the project's one cross-loop sender, ``reviewconsole/group_sender.py``
(the in-memory layer lives on Daphne's loop, runs happen on worker threads; a committed change is
read back and sent off the committing thread).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from ... import group_sender
from ..items.serializers import list_entry
from ..models import QueueChange
from ..pages.rows import render_row

logger = logging.getLogger("reviewconsole.inbox")

__all__ = [
    "change_message",
    "group_name",
    "publish",
    "publish_changes",
]


def group_name(queue_id: int) -> str:
    """The Channels group of a queue."""
    return f"queue.{queue_id}"


def publish(group: str, message: dict[str, Any]) -> None:
    """Send ``message`` to ``group`` from any thread or loop (``group_sender.send``)."""
    group_sender.send(group, message)


def change_message(change: QueueChange) -> dict[str, Any]:
    """A change as clients receive it (socket and catch-up alike)."""
    item = change.item
    message = {
        "event": change.event,
        "queue": change.queue_id,
        "version": change.version,
        "item": list_entry(item) if item is not None else None,
    }
    if change.event == "interrupt.created" and item is not None and item.is_pending:
        message["row"] = render_row(item, decided=False)
    return message


def publish_changes(changes: list[tuple[int, int]]) -> None:
    """Publish these committed changes (``(change_id, queue_id)``) to their queues' groups, in
    version order, off the committing thread (``group_sender.submit``). Never raises.

    A change of a queue nobody can hear (the in-memory layer with nobody in its group:
    ``group_sender.has_readers``, asked after the commit, so a reader who joins later finds the
    change in its snapshot) costs no read, row rendering or send."""
    heard = [pk for pk, queue_id in changes if group_sender.has_readers(group_name(queue_id))]
    if heard:
        group_sender.submit(lambda: _publish_changes(heard))


def _publish_changes(change_ids: list[int]) -> None:
    rows = (
        QueueChange.objects.filter(pk__in=change_ids)
        .select_related("item__queue", "item__claimed_by")
        .order_by("queue_id", "version")
    )
    for change in rows:
        try:
            body = change_message(change)
            # Serialised once here, not once per socket: a thousand reviewers receive the same text.
            message = {"type": "inbox.message", "queue": change.queue_id, "text": json.dumps(body)}
        except Exception:  # a lost live message is caught up on reconnect; never fail the commit for it
            logger.exception("Could not publish change %s of queue %s", change.version, change.queue_id)
            continue
        group_sender.send(group_name(change.queue_id), message)
