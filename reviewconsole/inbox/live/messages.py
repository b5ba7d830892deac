"""Live updates: tell each queue's Channels group what changed, with the queue's version.

A group message (``type: "inbox.message"``) carries ``queue`` (its id) and ``text``, the JSON the
sockets forward as it is (made once for every socket of a locale), of an object with ``event`` (``interrupt.created``,
``interrupt.claimed``, ``interrupt.unclaimed``, ``interrupt.resolved``, ``interrupt.cancelled``,
``interrupt.expired``, ``interrupt.escalated``), ``queue`` (its id), ``version`` (the queue's
version after this change, see ``changes.py``) and ``item``, the item's summary as it is when
the message is sent (``serializers.list_entry``); an ``interrupt.created`` of a waiting item also
``row``, its row as the waiting list renders it (``pages.rows.render_row``, times in the zone
active where the message is built: UTC for the socket), so a list shows a new request at once,
before the snapshot it then re-reads. The websocket consumer forwards them to reviewers of that queue only.

A row's money and numbers are in the reader's locale: ``text`` holds the row in ``en-US``, and
``texts`` (``{locale: JSON}``, only on a message with a row) the same message rendered once per
other locale saved by the people who may watch the queue (its reviewers and managers, and
superusers; ``preferences.locales``): once per distinct locale, not per reader. A socket sends
the text of its reader's locale (``consumers.py``), else ``text``.

Sending goes through the project's one cross-loop sender, ``reviewconsole/group_sender.py``
(the in-memory layer lives on Daphne's loop, runs happen on worker threads; a committed change is
read back and sent off the committing thread).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from django.db.models import Q

from ... import group_sender
from ...preferences.locales import DEFAULT_LOCALE, is_locale, override
from ...preferences.models import Preference
from ..items.serializers import list_entry
from ..models import Queue, QueueChange
from ..pages.rows import render_row

logger = logging.getLogger("reviewconsole.inbox")

__all__ = [
    "change_message",
    "group_message",
    "group_name",
    "publish",
    "publish_changes",
    "reader_locales",
]


def group_name(queue_id: int) -> str:
    """The Channels group of a queue."""
    return f"queue.{queue_id}"


def publish(group: str, message: dict[str, Any]) -> None:
    """Send ``message`` to ``group`` from any thread or loop (``group_sender.send``)."""
    group_sender.send(group, message)


def change_message(change: QueueChange) -> dict[str, Any]:
    """A change as clients receive it (socket and catch-up alike), its row (if any) in the
    active locale (the request's for a catch-up; ``locales.override`` for a socket's)."""
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


def reader_locales(queue: Queue) -> set[str]:
    """The locales other than ``en-US`` saved by the active people who may watch ``queue`` (its
    reviewers and managers, superusers), in one query."""
    groups = [pk for pk in (queue.group_id, queue.managers_id) if pk]
    saved = (
        Preference.objects.filter(Q(user__groups__in=groups) | Q(user__is_superuser=True), user__is_active=True)
        .exclude(locale__in=["", DEFAULT_LOCALE])
        .values_list("locale", flat=True)
        .distinct()
    )
    return {tag for tag in saved if is_locale(tag)}


def group_message(change: QueueChange) -> dict[str, Any]:
    """The group message of ``change``: its JSON in ``en-US`` (``text``) and, when it carries a
    row, in each other locale of the queue's readers (``texts``)."""
    with override(DEFAULT_LOCALE):
        body = change_message(change)
    # Serialised once here, not once per socket: a thousand reviewers receive the same text.
    message: dict[str, Any] = {"type": "inbox.message", "queue": change.queue_id, "text": json.dumps(body)}
    if "row" in body and change.item is not None:
        texts = {}
        for tag in sorted(reader_locales(change.queue)):
            with override(tag):
                texts[tag] = json.dumps({**body, "row": render_row(change.item, decided=False)})
        if texts:
            message["texts"] = texts
    return message


def _publish_changes(change_ids: list[int]) -> None:
    rows = (
        QueueChange.objects.filter(pk__in=change_ids)
        .select_related("queue", "item__queue", "item__claimed_by")
        .order_by("queue_id", "version")
    )
    for change in rows:
        try:
            message = group_message(change)
        except Exception:  # a lost live message is caught up on reconnect; never fail the commit for it
            logger.exception("Could not publish change %s of queue %s", change.version, change.queue_id)
            continue
        group_sender.send(group_name(change.queue_id), message)
