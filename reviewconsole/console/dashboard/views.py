"""The managers' dashboard: ``/dashboard/`` (the page), ``/dashboard/panel/`` (its figures as an
HTML fragment, which the page fetches again when one of its queues changes) and
``/dashboard/figures.json`` (the same figures as JSON).

Who may: a manager of at least one queue (a member of a queue's ``managers`` group) or a
superuser; each sees the queues they manage (``figures.dashboard_figures``). Anyone else gets 403,
someone not logged in the login page (JSON: 401 ``unauthorized``). ``?days=`` is 7, 14 (the
default) or 30; anything else is 400 ``invalid_days``.

Live: the page opens the inbox's socket (``static/console/live.js``, ``/ws/inbox/``), which joins
the groups of the user's queues: a change in a managed queue (an item created, claimed, decided…)
makes the page fetch its panel again, at most one fetch at a time (``static/console/dashboard.js``).
The panel names the next due time (``data-next-due``), when an item turns overdue without any
change: the page fetches it again then too.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from ...inbox.conf import inbox_setting
from ...inbox.items.selectors import managed_queues_for
from ...inbox.live.changes import current_versions
from ...json_errors import error_response
from .charts import charts_for
from .figures import DAYS, DEFAULT_DAYS, Dashboard, dashboard_figures

__all__ = ["dashboard", "dashboard_json", "dashboard_panel", "manages_queues"]


def manages_queues(user: object) -> bool:
    """Whether ``user`` manages a queue (or is a superuser): who may open the dashboard."""
    return managed_queues_for(user).exists()  # type: ignore[arg-type]


def _days(request: HttpRequest) -> int | None:
    raw = request.GET.get("days", "")
    if not raw:
        return DEFAULT_DAYS
    return int(raw) if raw.isdigit() and int(raw) in DAYS else None


def _figures(request: HttpRequest) -> Dashboard | HttpResponse:
    """The user's figures, or the refusal: 403 (manages no queue), 400 (``days`` not offered)."""
    if not manages_queues(request.user):
        raise PermissionDenied("Only a queue's managers see its dashboard.")
    days = _days(request)
    if days is None:
        return error_response(400, "invalid_days", f"days must be one of {', '.join(map(str, DAYS))}.")
    return dashboard_figures(request.user, days=days)


def _context(figures: Dashboard) -> dict[str, object]:
    day_chart, rows = charts_for(figures)
    return {
        "figures": figures,
        "day_chart": day_chart,
        "rows": rows,
        "days": len(figures.days),
        "choices": DAYS,
    }


@login_required
@require_GET
def dashboard(request: HttpRequest) -> HttpResponse:
    """The page: the panel, the choice of window, and the live socket's versions."""
    figures = _figures(request)
    if isinstance(figures, HttpResponse):
        return figures
    versions = current_versions(queue.pk for queue in figures.queues)
    live = {
        "versions": {str(k): v for k, v in versions.items()},
        "heartbeat": inbox_setting("HEARTBEAT_SECONDS"),
        "panel": reverse("dashboard_panel"),
        "days": len(figures.days),
    }
    context = {**_context(figures), "live": live}
    return render(request, "console/dashboard.html", context)


@login_required
@require_GET
def dashboard_panel(request: HttpRequest) -> HttpResponse:
    """The panel alone (what the page swaps in when its queues change)."""
    figures = _figures(request)
    if isinstance(figures, HttpResponse):
        return figures
    return render(request, "console/_dashboard_panel.html", _context(figures))


@require_GET
def dashboard_json(request: HttpRequest) -> HttpResponse:
    """The figures as JSON (``figures.Dashboard.as_json``); 401 without a login, 403 for a user
    who manages no queue."""
    if not request.user.is_authenticated:
        return error_response(401, "unauthorized", "Log in first.")
    if not manages_queues(request.user):
        return error_response(403, "forbidden", "Only a queue's managers see its dashboard.")
    figures = _figures(request)
    if isinstance(figures, HttpResponse):
        return figures
    return JsonResponse(figures.as_json())
