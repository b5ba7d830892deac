"""The inbox list: the page, its JSON snapshot, the change feed for catching up, and bulk actions.

Everything is limited to the user's queues (``selectors.queues_for``). The page and
``items.json`` take the same filters (``?queue=&workflow=&kind=&mine=1&unclaimed=1&overdue=1&
status=&q=&by_policy=1&my_decisions=1``) and cursor (``after=``), so a page that refreshes itself
from the snapshot shows exactly what a fresh load shows: both render each row with
``rows.render_row`` (the snapshot's ``row``).

Waiting items are listed with their owner, due time (a countdown) and age; decided ones (any
other ``status``, "My decisions") with their decision, decider and decision time.

On wide screens the page is two panes (``static/console/pane.js``): the list, and the selected
item's own page in a frame beside it; ``?item=<id>`` names the selected item, so the address can
be shared. When that frame leaves the item (a decision sends it to the list), the list page it
asks for is only its messages (``inbox/pane_left.html``): the request says it is for a frame
(``Sec-Fetch-Dest: iframe``).
"""

from __future__ import annotations

from urllib.parse import quote

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from engine import InterruptKind

from ...json_errors import error_response
from ...workflows import all_specs
from ..conf import inbox_setting
from ..items.actions import allows_bulk_approve
from ..items.claims import interrupt_claim, interrupt_unclaim
from ..items.decisions import interrupt_decide
from ..items.permissions import managed_workflows
from ..items.selectors import STATUSES, InboxFilters, InboxPage, count_label, inbox_page, item_for, queues_for
from ..items.serializers import list_entries
from ..live.changes import changes_since
from ..live.messages import change_message
from ..models import Item
from .failed import failed_sessions
from .headings import heading
from .item_views import REFUSALS
from .rows import render_row
from .view_helpers import wants_json

BULK_LIMIT = 200
"""Most items one bulk action takes."""


VIEWS = (
    ("waiting", "Waiting", InboxFilters()),
    ("decided", "Decided", InboxFilters(status="resolved")),
    ("my-decisions", "My decisions", InboxFilters(status="resolved", my_decisions=True)),
)
"""The list's views (tabs above the queues): name, label, the filters they set."""


def _filters_on(filters: InboxFilters) -> int:
    """How many filters of the "Filters" box are set (the search has its own box, the views their tabs)."""
    return sum(
        1
        for value in (
            filters.queue,
            filters.workflow,
            filters.kind,
            filters.mine,
            filters.unclaimed,
            filters.overdue,
            filters.by_policy,
        )
        if value
    ) + (filters.status not in ("pending", "resolved"))


def _view_of(filters: InboxFilters) -> str:
    """Which view's tab is current: the one whose status and "my decisions" the filters have."""
    for name, _, view in VIEWS:
        if (view.status, view.my_decisions) == (filters.status, filters.my_decisions):
            return name
    return ""


def _selected(request: HttpRequest) -> int | None:
    """``?item=<id>``: the item the two-pane page shows beside the list (its page checks access)."""
    raw = request.GET.get("item", "")
    return int(raw) if _number(raw) and len(raw) < 19 else None


def _page(request: HttpRequest) -> tuple[InboxFilters, InboxPage]:
    filters = InboxFilters.from_query(request.GET)
    page = inbox_page(request.user, filters, after=request.GET.get("after") or None, size=inbox_setting("PAGE_SIZE"))
    return filters, page


@login_required
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    """The user's items under the query's filters, overdue first; live through ``/ws/inbox/``.

    Asked for by a frame (the two-pane page's item frame, sent here after a decision): only the
    page's messages (``inbox/pane_left.html``), which the list beside it shows.
    """
    if request.headers.get("Sec-Fetch-Dest") == "iframe":
        return render(request, "inbox/pane_left.html")
    filters, page = _page(request)
    decided = filters.status != "pending"
    queues = list(queues_for(request.user))
    tabs = [
        {
            "queue": q,
            "count": count_label(page.counts.get(q.pk, 0)),
            "overdue": count_label(page.overdue_counts.get(q.pk, 0)) if page.overdue_counts.get(q.pk) else "",
            "query": filters.to_query(queue=q.slug),
        }
        for q in queues
    ]
    next_query = f"{filters.to_query()}&after={quote(page.next_cursor)}" if page.next_cursor else ""
    return render(
        request,
        "inbox/index.html",
        {
            "items": page.items,
            "rows": [render_row(i, decided=decided) for i in page.items],
            "decided": decided,
            "views": [
                {"name": name, "label": label, "query": view.to_query(), "current": name == _view_of(filters)}
                for name, label, view in VIEWS
            ],
            "selected": _selected(request),
            "page": page,
            "filters": filters,
            "queue_tabs": tabs,
            "filters_count": _filters_on(filters),
            "filters_open": _filters_on(filters) > 0,
            "all_queues_query": filters.to_query(queue=""),
            "next_query": next_query.lstrip("&"),
            "queues": queues,
            "workflows": [(s.name, s.title) for s in all_specs()],
            "kinds": [InterruptKind.INPUT, InterruptKind.CONFIRMATION, InterruptKind.LONG_RUNNING],
            "statuses": STATUSES,
            "failed": failed_sessions([q.pk for q in queues], managed_workflows(request.user)),
            "after": request.GET.get("after", ""),
            "live": {
                "versions": {str(k): v for k, v in page.versions.items()},
                "heartbeat": inbox_setting("HEARTBEAT_SECONDS"),
                "count_cap": inbox_setting("COUNT_CAP"),
                "query": filters.to_query(),
                "after": request.GET.get("after", ""),
                "decided": decided,
            },
        },
    )


@login_required
@require_GET
def items_json(request: HttpRequest) -> JsonResponse:
    """A snapshot of what the page with the same query shows, with the versions it reflects.

    ``{"items": [list entry + {"row": the row's HTML}], "versions", "counts", "overdue", "next"}``;
    a count over ``COUNT_CAP`` is cap + 1 (``selectors.queue_counts``): the page shows "cap+".
    """
    filters, page = _page(request)
    decided = filters.status != "pending"
    items = list(page.items)
    return JsonResponse(
        {
            "items": [
                {**entry, "row": render_row(item, decided=decided)}
                for item, entry in zip(items, list_entries(items), strict=True)
            ],
            "versions": {str(k): v for k, v in page.versions.items()},
            "counts": {str(k): v for k, v in page.counts.items()},
            "overdue": {str(k): v for k, v in page.overdue_counts.items()},
            "next": page.next_cursor,
        }
    )


def _number(text: str) -> bool:
    """Whole number in ASCII digits (``str.isdigit`` also takes "²", which ``int`` refuses)."""
    return text.isascii() and text.isdigit()


def _since(raw: str) -> dict[int, int]:
    """``"3:17,4:2"`` → ``{3: 17, 4: 2}``; malformed pairs are dropped (they mean "snapshot")."""
    found: dict[int, int] = {}
    for pair in raw.split(","):
        queue, _, version = (part.strip() for part in pair.partition(":"))
        if _number(queue) and _number(version):
            found[int(queue)] = int(version)
    return found


@login_required
@require_GET
def changes_json(request: HttpRequest) -> JsonResponse:
    """What changed in the user's queues since ``?since=<queue>:<version>,…``.

    ``{"changes": [{event, queue, version, item}], "versions": {…}, "reset": false}``, in the
    order they happened; ``reset: true`` means "take a fresh snapshot" (too much missed, or the
    log no longer reaches back). Only queues the user belongs to are ever read.
    """
    found = changes_since(queues_for(request.user), _since(request.GET.get("since", "")))
    return JsonResponse(
        {
            "changes": [change_message(c) for c in found["changes"]],
            "versions": {str(k): v for k, v in found["versions"].items()},
            "reset": found["reset"],
        }
    )


@login_required
@require_POST
def bulk(request: HttpRequest) -> HttpResponse:
    """Claim, release or approve the selected items (``ids``), each on its own.

    Approval takes only items whose interrupt allows bulk approval; every other refusal (claimed
    by someone else, decided meanwhile…) is listed and the rest still happen.

    Ids that are not whole numbers, no ids or an unknown action do nothing: the list again with
    the reason for a browser, ``400 invalid_request`` JSON for a caller that accepts JSON. An id
    given twice counts once. A caller that accepts JSON gets ``200 {"done": [item ids],
    "refused": [sentences]}`` instead of the list.
    """
    action = request.POST.get("action", "")
    raw_ids = request.POST.getlist("ids")
    if not all(_number(i) for i in raw_ids):
        return _bulk_refused(request, "Item ids are whole numbers; nothing was done.")
    ids = list(dict.fromkeys(int(i) for i in raw_ids))[:BULK_LIMIT]  # each item once, in the order given
    if action not in ("claim", "unclaim", "approve") or not ids:
        return _bulk_refused(request, "Select items and an action; nothing was done.")
    done: list[Item] = []
    refused, missing = [], 0
    for pk in ids:
        try:
            item = item_for(request.user, pk)
        except Http404:
            missing += 1  # not in the user's queues: nothing to name it by that they could see
            continue
        try:
            if action == "claim":
                interrupt_claim(interrupt=item, user=request.user, request=request)
            elif action == "unclaim":
                interrupt_unclaim(interrupt=item, user=request.user, request=request)
            elif not allows_bulk_approve(item):
                refused.append(
                    f"{_shown_name(item)}: approve it on its own page (its request does not allow bulk approval)"
                )
                continue
            else:
                interrupt_decide(interrupt=item, user=request.user, action="approve", request=request, door="bulk")
            done.append(item)
        except REFUSALS as exc:
            refused.append(f"{_shown_name(item)}: {getattr(exc, 'message', str(exc))}")
    if missing:
        refused.append(f"{missing} selected request{'s' if missing != 1 else ''}: not found in your queues")
    if wants_json(request):
        return JsonResponse({"done": [item.pk for item in done], "refused": refused})
    verb = {"claim": "Claimed", "unclaim": "Released", "approve": "Approved"}[action]
    messages.success(request, _done_message(verb, [_shown_name(item) for item in done]))
    if refused:
        messages.warning(request, "Not done: " + "; ".join(refused))
    return redirect(_back(request))


def _bulk_refused(request: HttpRequest, message: str) -> HttpResponse:
    if wants_json(request):
        return error_response(400, "invalid_request", message)
    messages.error(request, message)
    return redirect(_back(request))


def _done_message(verb: str, done: list[str]) -> str:
    """``Approved 2 items: “A”, “B”.``: what was done, naming each item (the first 10, then a count)."""
    count = f"{verb} {len(done)} item{'s' if len(done) != 1 else ''}"
    if not done:
        return f"{count}."
    shown = ", ".join(done[:10]) + (f" and {len(done) - 10} more" if len(done) > 10 else "")
    return f"{count}: {shown}."


def _shown_name(item: Item) -> str:
    """An item named as the list names it (``headings.heading``; never the row's pk)."""
    return f"“{heading(item).title}”"


def _back(request: HttpRequest) -> str:
    """The list with the filters the form was posted from (re-encoded: never another address)."""
    query = InboxFilters.from_query(QueryDict(request.POST.get("query", ""))).to_query()
    return f"/inbox/?{query}" if query else "/inbox/"
