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
from ..pages.headings import SUMMARY_LENGTH, heading
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


SEARCH_TEXT_LIMIT = 20_000
"""Characters of an item's search text kept (a long payload is cut at the end)."""


def search_text(*parts: Any) -> str:
    """Folded text (:func:`fold`) of titles, messages and JSON payloads (their values, not their
    keys), at most :data:`SEARCH_TEXT_LIMIT` characters."""
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
    return fold(" ".join(" ".join(words).split()))[:SEARCH_TEXT_LIMIT]


def item_search_text(item: Any) -> str:
    """:func:`search_text` of the title and summary ``item``'s row shows (``headings.heading``:
    "Refund $250.00 for order A-1001 — …", "Within the $100.00 policy limit: …", which change when
    it is decided), then of its own title, message and payload. The summary is left out when the
    message holds it (:func:`_summary_held`: an email draft's summary is the draft its message
    quotes, and the row held it twice, issue 18 target 7). ``item``: an :class:`Item`, or the
    historical model's row in a migration (read by attribute only)."""
    named = heading(item)  # first: a long payload is cut at the end, never the row's words
    summary = "" if _summary_held(named.title, named.summary, item.title or "", item.message or "") else named.summary
    return search_text(named.title, summary, item.title, item.message, item.payload)


def _summary_held(title: str, summary: str, own_title: str, message: str) -> bool:
    """Whether ``message`` holds ``summary`` whole, or the part a cut summary kept
    (``formats.one_line`` cut it to :data:`SUMMARY_LENGTH` with "…"), with the whole message
    inside the search text's :data:`SEARCH_TEXT_LIMIT`: then every substring of the summary the
    search could find, it finds in the message (the titles stay, so a search running from a title
    into the text still finds it)."""
    if not summary or not message:
        return False
    held = fold(" ".join(message.split()))
    before = sum(len(fold(" ".join(text.split()))) + 1 for text in (title, own_title))
    if before + len(held) + 2 > SEARCH_TEXT_LIMIT:
        return False
    flat = " ".join(summary.split())
    if fold(flat) in held:
        return True
    kept = flat.removesuffix("…").rstrip()
    return flat.endswith("…") and len(kept) >= SUMMARY_LENGTH - 2 and fold(kept) in held


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
