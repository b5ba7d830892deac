"""Reads for the inbox, always limited to the queues of the user's groups.

A reviewer is a member of a queue's ``group``; a queue manager a member of its ``managers``
group (managers see and decide their queues' items too); a superuser sees every queue. Anyone
else sees nothing: every page, JSON answer and websocket group comes from :func:`queues_for`.

Pages are keyset pages per queue, merged: each queue's query walks an index whose columns are
its filter and its order (``models.Item.Meta.indexes``), so a page costs the same with ten
or a hundred thousand pending items. Overdue items come first (by due time), then the rest (oldest
first); decided items, newest first.
"""

from __future__ import annotations

import datetime as dt
import heapq
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.cache import cache
from django.db.models import Q, QuerySet
from django.http import Http404
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from ...policies.models import FirstApproval
from ..conf import inbox_setting
from ..live.changes import current_versions
from ..models import Item, ItemStatus, Queue
from .assignment import fold
from .filters import STATUSES, InboxFilters
from .policy_gate import by_policy
from .search import matching

__all__ = [
    "ITEM_RELATED",
    "STATUSES",
    "InboxFilters",
    "InboxPage",
    "count_label",
    "inbox_items_for",
    "inbox_page",
    "is_queue_manager",
    "item_for",
    "managed_queues_for",
    "neighbours",
    "queues_for",
    "visible_interrupts_for",
]

User = AbstractBaseUser | AnonymousUser


def queues_for(user: User) -> QuerySet[Queue]:
    """Queues the user reviews or manages (all of them for superusers)."""
    if not user.is_authenticated:
        return Queue.objects.none()
    if user.is_superuser:
        return Queue.objects.all()
    groups = user.groups.all()  # type: ignore[union-attr]
    return Queue.objects.filter(Q(group__in=groups) | Q(managers__in=groups)).distinct()


def managed_queues_for(user: User) -> QuerySet[Queue]:
    """Queues the user manages (all of them for superusers)."""
    if not user.is_authenticated:
        return Queue.objects.none()
    if user.is_superuser:
        return Queue.objects.all()
    return Queue.objects.filter(managers__in=user.groups.all())  # type: ignore[union-attr]


def is_queue_manager(user: User, queue_id: int) -> bool:
    return managed_queues_for(user).filter(pk=queue_id).exists()


def visible_interrupts_for(user: User) -> QuerySet[Item]:
    """Every interrupt (any status) in the user's queues."""
    return Item.objects.filter(queue__in=queues_for(user)).select_related("queue", "session", "claimed_by")


def inbox_items_for(user: User) -> QuerySet[Item]:
    """Pending items of the user's queues, oldest first (unpaged; for small reads and tests)."""
    return visible_interrupts_for(user).filter(status=ItemStatus.PENDING).order_by("created_at", "id")


ITEM_RELATED = ("queue", "session", "session_interrupt", "claimed_by", "escalated_from")
"""The rows an item's page and its decision read beside it, in the item's query (``select_related``)."""


def item_for(user: User, pk: int) -> Item:
    """The item ``pk`` if the user may see it: in their queues, or escalated away from one of them
    (so a page left open there can say where it went).

    Raises:
        Http404: the user may not see it (or it does not exist): the same answer for both.
    """
    mine = queues_for(user)
    row = (
        Item.objects.select_related(*ITEM_RELATED).filter(Q(queue__in=mine) | Q(escalated_from__in=mine), pk=pk).first()
    )
    if row is None:
        raise Http404("No such item.")
    return row


# -- filters and pages ------------------------------------------------------------------------


@dataclass
class InboxPage:
    items: list[Item]
    next_cursor: str | None
    versions: dict[int, int]
    counts: dict[int, int] = field(default_factory=dict)
    overdue_counts: dict[int, int] = field(default_factory=dict)
    queues: list[Queue] = field(default_factory=list)


# A segment: (name, ordering field, descending). Pending pages walk "overdue" then "waiting";
# decided pages (resolved, expired, cancelled, my decisions) show the newest decision first.
_OVERDUE = ("o", "due_at", False)
_WAITING = ("n", "created_at", False)
_DECIDED = ("d", "decided_at", True)
_KEYS = {name: key for name, key, _ in (_OVERDUE, _WAITING, _DECIDED)}  # a cursor's key per segment


def _segments(filters: InboxFilters) -> list[tuple[str, str, bool]]:
    if filters.status != "pending":
        return [_DECIDED]
    return [_OVERDUE] if filters.overdue else [_OVERDUE, _WAITING]


SEARCH_IDS = 2000
"""A search with at most this many matches reads them once (:func:`_search_ids`), then pages by id."""


def _search_ids(queue_ids: list[int], filters: InboxFilters, user: User, now: dt.datetime) -> list[int] | None:
    """The ids of every item the search matches under ``filters`` when there are at most
    :data:`SEARCH_IDS`, else None (a common word: the pages' ordered walks find a page at once).

    One substring search (``search.matching``: on PostgreSQL the words index, or the trigram one
    for a query without whole words; a scan on SQLite) instead of one per segment of the page.
    """
    rows = matching(_base(queue_ids, replace(filters, q=""), user, now), fold(filters.q))
    rows = rows.order_by().values_list("id", flat=True)
    found = list(rows[: SEARCH_IDS + 1])
    return found if len(found) <= SEARCH_IDS else None


def _base(
    scope: list[int], filters: InboxFilters, user: User, now: dt.datetime, matched: list[int] | None = None
) -> QuerySet[Item]:
    """The rows of ``scope`` under ``filters``; a search by ``matched`` ids when given (:func:`_search_ids`)."""
    rows = Item.objects.filter(queue_id=scope[0]) if len(scope) == 1 else Item.objects.filter(queue_id__in=scope)
    if filters.status == "expired":
        rows = rows.filter(status=ItemStatus.RESOLVED, decision="timeout")
    else:
        rows = rows.filter(status=filters.status)
    if filters.workflow:
        rows = rows.filter(workflow=filters.workflow)
    if filters.kind:
        rows = rows.filter(kind=filters.kind)
    if filters.mine:
        rows = rows.filter(claimed_by_id=user.pk, claim_expires_at__gt=now)
    if filters.unclaimed:
        rows = rows.filter(Q(claimed_by__isnull=True) | Q(claim_expires_at__lte=now))
    if filters.q and matched is not None:
        rows = rows.filter(id__in=matched)
    elif filters.q:
        rows = rows.filter(search_text__contains=fold(filters.q))
    if filters.by_policy:
        rows = rows.filter(by_policy())
    if filters.my_decisions:
        rows = rows.filter(_decided_by(user))
    return rows


def _decided_by(user: User) -> Q:
    """What ``user`` decided: as the decider, or as the first approver under four eyes. Without a
    first approval (the common case) the ``interrupt_decided_by_at`` index answers it in order; with
    some, their requests join it and the user's decided rows are sorted."""
    firsts = list(FirstApproval.objects.filter(user_id=user.pk).values_list("session_interrupt_id", flat=True))
    mine = Q(decided_by_id=user.pk)
    return mine | Q(session_interrupt_id__in=firsts) if firsts else mine


def _segment_query(
    rows: QuerySet[Item], segment: tuple[str, str, bool], now: dt.datetime, after: tuple[Any, int] | None
) -> QuerySet[Item]:
    name, key, desc = segment
    if name == "o":
        rows = rows.filter(due_at__lte=now)
    elif name == "n":
        rows = rows.filter(Q(due_at__isnull=True) | Q(due_at__gt=now))
    if after is not None:
        value, pk = after
        # ``key >= value`` bounds the index range; the OR breaks ties on id within it.
        if desc:
            rows = rows.filter(**{f"{key}__lte": value}).filter(Q(**{f"{key}__lt": value}) | Q(id__lt=pk))
        else:
            rows = rows.filter(**{f"{key}__gte": value}).filter(Q(**{f"{key}__gt": value}) | Q(id__gt=pk))
    order = (f"-{key}", "-id") if desc else (key, "id")
    return rows.order_by(*order)


def _cursor(segment: str, key: dt.datetime, pk: int) -> str:
    return f"{segment}|{key.isoformat()}|{pk}"


def _parse_cursor(cursor: str | None) -> tuple[str, tuple[dt.datetime, int]] | None:
    """``(segment, (key in UTC, pk))`` of a cursor :func:`_cursor` wrote; None for anything else
    (a forged one: a date that leaves the calendar in UTC, a pk no database column holds), which
    reads as the first page."""
    if not cursor:
        return None
    try:
        segment, when, raw_pk = cursor.split("|")
        parsed = parse_datetime(when)
        pk = int(raw_pk)
        if segment not in ("o", "n", "d") or parsed is None or not 0 <= pk < 2**63:
            return None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=dt.UTC)
        return segment, (parsed.astimezone(dt.UTC), pk)
    except (ValueError, OverflowError):
        return None


def _scopes(queue_ids: list[int], filters: InboxFilters) -> list[list[int]]:
    """One query per queue (its index orders it), except "claimed by me", "my decisions" and a
    text search: one query over the user's claims or decisions (the ``interrupt_claimed`` and
    ``interrupt_decided_by_at`` indexes), or over the search's matches (on PostgreSQL the words
    index ``interrupt_search_words`` or the trigram one finds them, ``search.matching``; SQLite
    scans once, not once per queue), whatever the queue."""
    one = filters.mine or filters.my_decisions or filters.q
    return [queue_ids] if one and queue_ids else [[q] for q in queue_ids]


def _walk(
    queue_ids: list[int], filters: InboxFilters, user: User, now: dt.datetime, after: str | None, limit: int
) -> Iterator[tuple[str, Item]]:
    """Items in list order after the cursor, at most ``limit``: per queue, then merged."""
    segments = _segments(filters)
    start = _parse_cursor(after)
    names = [s[0] for s in segments]
    index = names.index(start[0]) if start and start[0] in names else 0
    produced = 0
    matched = _search_ids(queue_ids, filters, user, now) if filters.q else None
    for position, segment in enumerate(segments[index:]):
        key_after = start[1] if start and position == 0 and start[0] == segment[0] else None
        name, key, desc = segment
        per_queue = []
        for scope in _scopes(queue_ids, filters):
            query = _segment_query(_base(scope, filters, user, now, matched), segment, now, key_after)
            per_queue.append(list(query.select_related("queue", "claimed_by")[: limit - produced]))

        def sort_key(row: Item, key: str = key) -> tuple[Any, int]:
            return (getattr(row, key), row.pk)

        for row in heapq.merge(*per_queue, key=sort_key, reverse=desc):
            yield name, row
            produced += 1
            if produced >= limit:
                return


def inbox_page(user: User, filters: InboxFilters, *, after: str | None = None, size: int = 50) -> InboxPage:
    """One page of the user's items under ``filters``, after the cursor ``after`` (None: the first).

    ``versions`` are read before the items, so a change that lands while the page is being read
    is caught up by a client asking for changes since them.
    """
    now = timezone.now()
    queues = list(queues_for(user))
    if filters.queue:
        queues = [q for q in queues if q.slug == filters.queue]
    queue_ids = [q.pk for q in queues]
    versions = current_versions(queue_ids)
    found = list(_walk(queue_ids, filters, user, now, after, size + 1))
    more = len(found) > size
    found = found[:size]
    last = found[-1] if found else None
    next_cursor = None
    if more and last is not None:
        name, row = last
        next_cursor = _cursor(name, getattr(row, _KEYS[name]), row.pk)
    counts, overdue = queue_counts(versions, now)
    return InboxPage(
        items=[row for _, row in found],
        next_cursor=next_cursor,
        versions=versions,
        counts=counts,
        overdue_counts=overdue,
        queues=queues,
    )


def queue_counts(versions: dict[int, int], now: dt.datetime) -> tuple[dict[int, int], dict[int, int]]:
    """Pending and overdue items per queue (queues with none left out), each counted up to
    ``COUNT_CAP`` + 1 (:func:`count_label` shows more than the cap as "10000+"), cached under the
    queues' versions.

    Counting stops at the cap so that a page costs the same at a million waiting items as at
    ten thousand (an index range of at most cap + 1 entries per queue, not the whole queue).
    Counts change only with a queue change (an item becoming overdue is one too: its expiry
    task logs it), so a count computed at the same versions is still right. Entries live 30
    seconds: an item that became overdue on a backend that cannot defer its expiry task is
    counted overdue within that time.
    """
    key = "inbox-counts:" + ",".join(f"{q}.{v}" for q, v in sorted(versions.items()))
    cap = int(inbox_setting("COUNT_CAP"))

    def counted(rows: QuerySet[Item]) -> dict[int, int]:
        found = {q: rows.filter(queue_id=q).order_by().values("id")[: cap + 1].count() for q in versions}
        return {q: n for q, n in found.items() if n}

    def compute() -> tuple[dict[int, int], dict[int, int]]:
        pending = Item.objects.filter(status=ItemStatus.PENDING)
        return counted(pending), counted(pending.filter(due_at__lte=now))

    return cache.get_or_set(key, compute, 30) if versions else ({}, {})  # type: ignore[no-any-return]


def count_label(count: int) -> str:
    """A count of :func:`queue_counts` as the page shows it: ``"42"``, or ``"10000+"`` over the cap."""
    cap = int(inbox_setting("COUNT_CAP"))
    return f"{cap}+" if count > cap else str(count)


def neighbours(user: User, item: Item, filters: InboxFilters | None = None) -> tuple[int | None, int | None]:
    """The pending items just before and after ``item`` in the user's list order: ``(prev, next)``."""
    filters = filters or InboxFilters()
    now = timezone.now()
    queue_ids = [q.pk for q in queues_for(user)]
    overdue = item.is_overdue(now)
    segment = "o" if overdue else "n"
    key = item.due_at if overdue else item.created_at
    cursor = _cursor(segment, key, item.pk)  # type: ignore[arg-type]
    after = next((row.pk for _, row in _walk(queue_ids, filters, user, now, cursor, 1)), None)
    before = _previous(queue_ids, filters, user, now, segment, key, item.pk)  # type: ignore[arg-type]
    return before, after


def _previous(
    queue_ids: list[int], filters: InboxFilters, user: User, now: dt.datetime, segment: str, key: dt.datetime, pk: int
) -> int | None:
    """The item before ``(segment, key, pk)``: the reverse walk, one row per queue."""
    order = [_OVERDUE, _WAITING]
    start = 0 if segment == "o" else 1
    for position in range(start, -1, -1):
        _, field_name, _ = order[position]
        candidates = []
        for scope in _scopes(queue_ids, filters):
            rows = _segment_query(_base(scope, filters, user, now), order[position], now, None)
            if position == start:
                rows = rows.filter(**{f"{field_name}__lte": key}).filter(Q(**{f"{field_name}__lt": key}) | Q(id__lt=pk))
            row = rows.order_by(f"-{field_name}", "-id").first()
            if row is not None:
                candidates.append((getattr(row, field_name), row.pk))
        if candidates:
            return max(candidates)[1]
    return None
