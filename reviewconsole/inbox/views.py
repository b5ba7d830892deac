"""Inbox pages: the list of pending items, an item's detail, and the decision POST."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from engine import AlreadyDecidedError, AnswerInvalidError, EngineError

from ..workflow_sessions.runners import configured_model
from ..workflows import UnknownWorkflowError, get
from .live import summary
from .models import Interrupt, InterruptStatus
from .selectors import inbox_items_for, queues_for, visible_interrupts_for
from .services import DecisionError, interrupt_decide


@login_required
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    items = list(inbox_items_for(request.user)[:200])
    return render(request, "inbox/index.html", {"items": items, "queues": list(queues_for(request.user))})


@login_required
@require_GET
def items_json(request: HttpRequest) -> JsonResponse:
    """A snapshot of the pending items (what a fresh page load shows), for clients catching up."""
    return JsonResponse({"items": [summary(i) for i in inbox_items_for(request.user)[:200]]})


def _detail_context(item: Interrupt) -> dict[str, object]:
    session = item.session
    try:
        spec = get(session.workflow)
        kind = spec.kind
        title = spec.title
    except UnknownWorkflowError:
        kind, title = "", session.workflow
    model = configured_model()
    return {
        "item": item,
        "session": session,
        "workflow_title": title,
        "kind": kind,
        "complaint": session.state.get("complaint", ""),
        "draft": session.state.get("draft", ""),
        "feedback": session.state.get("feedback", ""),
        "model_name": model.name,
        "model_offline": getattr(model, "offline", False),
        "pending": item.status == InterruptStatus.PENDING,
    }


@login_required
@require_GET
def detail(request: HttpRequest, pk: int) -> HttpResponse:
    item = get_object_or_404(visible_interrupts_for(request.user), pk=pk)
    return render(request, "inbox/detail.html", _detail_context(item))


def _refused(request: HttpRequest, item: Interrupt, status: int, **notice: str) -> HttpResponse:
    """The detail page again, with ``error`` or ``conflict`` said at the top."""
    return render(request, "inbox/detail.html", {**_detail_context(item), **notice}, status=status)


@login_required
@require_POST
def decide(request: HttpRequest, pk: int) -> HttpResponse:
    """Record approve / reject / feedback, then back to the inbox.

    404 outside the user's queues; 400 for an incomplete decision or an answer that fails the
    schema; 409 when someone decided first (naming who and when) or the session cannot take
    answers. Nothing is stored on any refusal.
    """
    item = get_object_or_404(visible_interrupts_for(request.user), pk=pk)
    action = request.POST.get("action", "")
    try:
        interrupt_decide(interrupt=item, user=request.user, action=action, text=request.POST.get("feedback", ""))
    except AlreadyDecidedError as exc:
        item.refresh_from_db()
        return _refused(request, item, 409, conflict=exc.message)
    except DecisionError as exc:
        return _refused(request, item, 400, error=str(exc))
    except AnswerInvalidError as exc:
        return _refused(request, item, 400, error=exc.message)
    except EngineError as exc:
        return _refused(request, item, 409, error=exc.message)
    except UnknownWorkflowError:
        return _refused(request, item, 409, error="This workflow is not available any more; nothing was recorded.")
    messages.success(request, f"Decision recorded: {action}.")
    return redirect("inbox:index")
