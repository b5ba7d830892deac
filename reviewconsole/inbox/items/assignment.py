"""Which queue an interrupt goes to: its own ``metadata["queue"]``, else its workflow's queue,
else the triage queue. Items are never left without a queue: a queue named but missing falls
back to triage, which is created on demand.

:func:`item_row` builds the whole item for an interrupt the outbox reports opened
(``workflow_sessions.domain_events.InterruptOpened``): queue, due time (``expiry.due_fields``),
and the denormalised workflow, title and search text the inbox's indexed pages filter on.
(Channels' URL routing is ``routing_ws.py``.) :func:`item_search_text` is what the inbox's text
search matches: the item's raw text and the title and summary its row shows (``pages.headings``).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
import unicodedata
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group
from django.utils import timezone

from ...workflow_sessions.domain_events import InterruptOpened
from ...workflows import UnknownWorkflowError, get
from ..models import Item, Queue
from ..pages.headings import heading
from .expiry import due_fields

logger = logging.getLogger("reviewconsole.inbox")

__all__ = ["fold", "item_row", "item_search_text", "queue_for", "search_text", "triage_queue"]


def triage_queue() -> Queue:
    """The default queue for items nobody else takes (created with its group if missing)."""
    slug = settings.REVIEWCONSOLE["TRIAGE_QUEUE"]
    queue = Queue.objects.filter(slug=slug).first()
    if queue is None:
        group, _ = Group.objects.get_or_create(name=f"queue:{slug}")
        queue, _ = Queue.objects.get_or_create(slug=slug, defaults={"name": "Triage", "group": group})
    return queue


QUEUES_TTL = 5.0
"""Seconds a process reuses a queue looked up by slug (every pause routes; queues rarely change).
A change is seen at once by the process that made it and within this time by others."""

_queues: dict[str, tuple[float, Queue | None]] = {}


def _queue_by_slug(slug: str) -> Queue | None:
    now = time.monotonic()
    found = _queues.get(slug)
    if found is None or now - found[0] > QUEUES_TTL:
        found = (now, Queue.objects.filter(slug=slug).first())
        _queues[slug] = found
    return found[1]


def forget_queues(**kwargs: Any) -> None:
    """Drop the cached queues (connected to Queue saves and deletes)."""
    _queues.clear()


def queue_for(workflow: str, metadata: dict[str, Any]) -> Queue:
    """The queue for an interrupt of ``workflow`` with this metadata."""
    slug = metadata.get("queue")
    if not slug:
        try:
            slug = get(workflow).queue
        except UnknownWorkflowError:
            slug = None
    queue = _queue_by_slug(slug) if slug else None
    if queue is None:
        if slug:
            logger.warning("Queue %r of workflow %s does not exist; routing to triage", slug, workflow)
        queue = triage_queue()
    return queue


def fold(text: str) -> str:
    """``text`` as the search compares it: case-folded (``str.casefold``: "Straße" → "strasse"),
    accents and other combining marks dropped after NFKD ("İstanbul", "Café" → "istanbul", "cafe"),
    so a search typed either way finds it. The stored text and the query are folded alike."""
    if text.isascii():  # the common case: casefold is lower, and there is nothing to decompose
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def search_text(*parts: Any) -> str:
    """Folded text (:func:`fold`) of titles, messages and JSON payloads (their values, not their keys)."""
    words: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item)
        elif value is not None:
            words.append(value if isinstance(value, str) else json.dumps(value))

    for part in parts:
        walk(part)
    return fold(" ".join(" ".join(words).split()))[:20_000]


def item_search_text(item: Any) -> str:
    """:func:`search_text` of the title and summary ``item``'s row shows (``headings.heading``:
    "Refund $250.00 for order A-1001 — …", "Within the $100.00 policy limit: …", which change when
    it is decided), then of its own title, message and payload. ``item``: an :class:`Item`, or the
    historical model's row in a migration (read by attribute only)."""
    named = heading(item)  # first: a long payload is cut at the end, never the row's words
    return search_text(*_distinct(named.title, named.summary, item.title, item.message), item.payload)


def _distinct(*texts: str) -> list[str]:
    """``texts`` but those another one holds whole once folded (a substring of a longer one, or
    equal to an earlier one), a summary cut with "…" (``formats.one_line``) judged by what it kept:
    a row's summary is its message or draft, whole or cut, and the row held it twice (issue 18
    target 7). Each substring the search finds in one it drops, it finds in the one holding it."""
    folded = [fold(" ".join(text.removesuffix("…").split())) for text in texts]
    return [
        texts[i]
        for i, text in enumerate(folded)
        if not any(text in other and (len(other) > len(text) or j < i) for j, other in enumerate(folded) if j != i)
    ]


def item_row(event: InterruptOpened) -> Item:
    """The unsaved item for the interrupt ``event`` reports opened (linked to the session's row)."""
    rec = event.record
    metadata = dict(rec.get("metadata") or {})
    created = dt.datetime.fromisoformat(rec["created_at"]) if rec.get("created_at") else timezone.now()
    row = Item(
        session_id=event.session_id,
        session_interrupt_id=event.interrupt_pk,
        workflow=event.workflow,
        title=event.title,
        interrupt_id=rec["interrupt_id"],
        local_id=rec.get("local_id", ""),
        kind=rec["kind"],
        function_name=rec.get("function_name", ""),
        node_path=rec.get("node_path", ""),
        branch=rec.get("branch", ""),
        invocation_id=rec.get("invocation_id", ""),
        message=rec.get("message", ""),
        payload=rec.get("payload"),
        response_schema=rec.get("response_schema"),
        tool_call=rec.get("tool_call"),
        metadata=metadata,
        queue=queue_for(event.workflow, metadata),
        **due_fields(event.workflow, metadata, created),
    )
    row.search_text = item_search_text(row)
    return row
