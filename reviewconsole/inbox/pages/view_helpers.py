"""What the item views share: the detail page's context and one mapping from errors to answers.

Refusals (``refusal``): a decision or claim the item does not take is answered with the detail
page again, the reason at the top, and the status code that says what happened: 400 incomplete
(nothing stored), 403 not allowed, 409 conflict (decided first, claimed by someone else,
expired, superseded, moved, workflow gone). JSON callers (``Accept: application/json``) get
``{"error": {"code", "message", …}}`` (:mod:`reviewconsole.json_errors`) with the same
code. An item moved to a queue the user is not in is
not shown again: the page goes back to the inbox with the reason.

A missing item (or one outside the user's queues: the same answer) is Django's 404 page for a
browser and ``404 {"error": {"code": "item_unknown", …}}`` for a JSON caller (``json_404``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone

from engine import AlreadyDecidedError, AnswerInvalidError, EngineError

from ...json_errors import error_response
from ...workflow_sessions.llm import configured_model, workflow_model
from ...workflow_sessions.outbox import relay
from ...workflow_sessions.outcome import session_outcome
from ...workflows import UnknownWorkflowError, get
from ..conf import inbox_setting
from ..errors import DecisionAmbiguousError, DecisionError, InboxConflict, MovedError
from ..items.actions import allowed_actions, can_edit_draft, reject_reason_required, request_kind
from ..items.comments import comments_for
from ..items.decision_checks import reason_needed_for
from ..items.decisions import editable_arguments
from ..items.escalation import escalation_targets
from ..items.permissions import can_retry
from ..items.policy_gate import standing_offered
from ..items.refusals import retried_request
from ..items.selectors import is_queue_manager, neighbours, queues_for
from ..items.serializers import status_sentence
from ..items.standing_grants import person_started
from ..models import Item, Queue
from ..pictures.serving import mermaid_available, session_picture
from .decided import decision_context
from .drafts import draft_of
from .headings import heading
from .kinds import detail_parts
from .schema_form import UNDRAWABLE, form_fields
from .schema_shape import FormSchemaError

__all__ = ["detail_context", "json_404", "refusal", "wants_json"]


def wants_json(request: HttpRequest) -> bool:
    """A caller that accepts ``application/json``, or a request for a ``….json`` address (which
    answers nothing but JSON, so its errors are JSON too)."""
    return request.path.endswith(".json") or "application/json" in request.headers.get("Accept", "")


def json_404[**P](view: Callable[P, HttpResponse]) -> Callable[P, HttpResponse]:
    """``view``'s ``Http404`` (no such item in the user's queues) as ``404 item_unknown`` JSON for
    a caller that accepts JSON; a browser still gets Django's 404 page."""

    @wraps(view)
    def wrapped(*args: P.args, **kwargs: P.kwargs) -> HttpResponse:
        try:
            return view(*args, **kwargs)
        except Http404:
            request = args[0]
            if isinstance(request, HttpRequest) and wants_json(request):
                return error_response(404, "item_unknown", "No such item in your queues.")
            raise

    return wrapped


def _reviewers(queue: Queue) -> list[Any]:
    groups = [g for g in (queue.group_id, queue.managers_id) if g]
    return list(get_user_model().objects.filter(Q(groups__in=groups), is_active=True).distinct().order_by("username"))


def detail_context(request: HttpRequest, item: Item, **extra: Any) -> dict[str, Any]:
    """Everything the detail page shows of ``item`` to ``request.user``."""
    user = request.user
    session = item.session
    try:
        spec = get(session.workflow)
        title = item.title if spec.builtin and item.title else spec.title  # a review: the title its client gave
        model = workflow_model(session.workflow)
    except UnknownWorkflowError:
        title = session.workflow
        model = configured_model()
    member = queues_for(user).filter(pk=item.queue_id).exists()
    manager = member and is_queue_manager(user, item.queue_id)
    pending = item.is_pending and member
    actions = allowed_actions(item) if pending else []
    holder = item.claim_holder()
    parts = detail_parts(item)
    form = None
    form_problem = ""
    if "answer" in actions:
        try:
            form = form_fields(item.response_schema or {}, extra.pop("form_data", None), extra.pop("form_errors", None))
        except FormSchemaError as exc:  # stored before the API refused such schemas
            form_problem = f"{UNDRAWABLE} ({exc.message}, at {exc.where})."
            actions = [a for a in actions if a != "answer"]
    prev_pk, next_pk = neighbours(user, item) if member else (None, None)
    return {
        "item": item,
        "session": session,
        "workflow_title": title,
        "heading": heading(item),  # the request's own title and summary, as its row in the list
        "kind": request_kind(item),
        **parts,
        "complaint": parts["facts"].get("complaint", ""),
        "draft": parts["facts"].get("draft", ""),
        "model_name": model.name,
        "model_offline": getattr(model, "offline", False),
        "pending": pending,
        "member": member,
        # The requester never approves their own (policy_gate.approval_gate): the page says so.
        "own_request": pending and session.user_id == f"user:{user.get_username()}",
        "is_manager": manager,
        "actions": actions,
        # Which decisions need a reason here: a rejection (the inbox's setting), and any the
        # workflow's checks refuse without one (the refund's approval above $500).
        "reason_for": _reason_for(item, pending),
        "can_edit": pending and can_edit_draft(item),
        # Approvals bound to the exact call (engine._digest): the form posts the id and digest shown.
        "args_digest": (item.metadata or {}).get("args_digest", ""),
        "args_text": editable_arguments(item) if pending and "approve" in actions else "",
        "form": form,
        "form_problem": form_problem,
        "claimed_by": item.claimed_by if holder else None,
        "claimed_by_me": holder == user.pk,
        "claim_ttl_minutes": round(item.queue.claim_ttl().total_seconds() / 60),
        "reviewers": _reviewers(item.queue) if manager and pending else [],
        "all_queues": list(Queue.objects.exclude(pk=item.queue_id)) if manager and pending else [],
        "comments": list(comments_for(item)) if member else [],
        "escalation_targets": escalation_targets(item) if pending else [],
        "may_defer": pending and (not holder or holder == user.pk or manager),
        "defer_default": timezone.localtime(timezone.now() + dt.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M"),
        "picture": session_picture(session),
        "mermaid": mermaid_available(),
        "sentence": status_sentence(item),
        "retried": retried_request(item),  # cancelled by the session's failure, asked again by a Retry
        # How the session went on after the decision (its status, then its result once it ended).
        "outcome": None if item.is_pending else session_outcome(session),
        "can_retry": member and can_retry(user, session),
        # The decision first (what was answered, by whom, when, what replaced it), four eyes
        # ("1 of 2 approvals, by X"): the same context as status.json's decision section.
        **decision_context(item),
        "standing_offer": pending and "approve" in actions and standing_offered(item),
        "standing_person": person_started(item),  # the "sessions this person starts" scope
        "prev_pk": prev_pk,
        "next_pk": next_pk,
        "live": {
            "item": item.pk,
            "queue": item.queue_id,
            "version": item.queue.version,
            "heartbeat": inbox_setting("HEARTBEAT_SECONDS"),
            "open": item.is_pending,  # served waiting: a decision elsewhere makes the page out of date
        },
        **extra,
    }


def refusal(request: HttpRequest, item: Item, exc: Exception, **extra: Any) -> HttpResponse:
    """The answer to an action ``item`` refused with ``exc`` (see the module docstring).

    Raises:
        Exception: ``exc`` itself when it is not a refusal (a bug: let it surface as a 500).
    """
    status, key, message, details = _classify(exc)
    if wants_json(request):
        return error_response(status, key, message, **details)
    if status == 409:
        # The decision that beat this one may still be on its way to the item (its relay runs
        # right after its commit): relay it here, waiting for the other relay if it holds the row,
        # so the page shows the item as decided and by whom.
        relay(session_id=item.session_id)
    item.refresh_from_db()
    if isinstance(exc, MovedError) and not queues_for(request.user).filter(pk=item.queue_id).exists():
        messages.error(request, message)
        return redirect("inbox:index")
    # "conflict": the item's state refused it (someone, or time, got there first); "error": the
    # request or the workflow is at fault.
    conflict = status == 409 and key not in ("workflow_gone",) and isinstance(exc, InboxConflict | AlreadyDecidedError)
    notice = {"conflict" if conflict else "error": message}
    if isinstance(exc, InboxConflict) and exc.details.get("newer_url"):
        extra["newer_url"] = exc.details["newer_url"]  # superseded: the page links the newer request
    if request.method == "POST" and status == 400:  # give back what they typed
        draft = request.POST.get("draft", "")
        extra.update(
            posted_feedback=request.POST.get("feedback", ""),
            posted_reason=request.POST.get("reason", ""),
            edited_draft=draft if draft.replace("\r\n", "\n").strip("\n") != (draft_of(item) or "").strip("\n") else "",
            posted_args=request.POST.get("args", "") if request.POST.get("edit_args") else "",
        )
    if isinstance(exc, DecisionAmbiguousError):  # each conflicting field says why, next to it
        extra["field_errors"] = {e["path"][-1]: e["message"] for e in exc.errors}
    elif isinstance(exc, DecisionError) and exc.errors:
        extra["form_errors"] = exc.errors
    return render(request, "inbox/detail.html", detail_context(request, item, **notice, **extra), status=status)


def _reason_for(item: Item, pending: bool) -> str:
    """ "approve", "reject" or "approve or reject": the decisions the reason field is required for."""
    needed = set(reason_needed_for(item)) if pending else set()
    if reject_reason_required(item):
        needed.add("reject")
    return " or ".join(d for d in ("approve", "reject") if d in needed)


def _classify(exc: Exception) -> tuple[int, str, str, dict[str, Any]]:
    if isinstance(exc, InboxConflict):
        return 409, exc.code, exc.message, exc.details
    if isinstance(exc, AlreadyDecidedError):
        return 409, "already_decided", exc.message, dict(exc.details)
    if isinstance(exc, DecisionError):
        return 400, exc.code, exc.message, {"errors": exc.errors, **exc.details}
    if isinstance(exc, AnswerInvalidError):
        return 400, "invalid", exc.message, {"errors": exc.details.get("errors", [])}
    if isinstance(exc, PermissionDenied):
        return 403, "forbidden", str(exc) or "You may not do that.", {}
    if isinstance(exc, UnknownWorkflowError):
        return 409, "workflow_gone", "This workflow is not available any more; nothing was recorded.", {}
    if isinstance(exc, EngineError):
        return 409, exc.code, exc.message, {}
    raise exc
