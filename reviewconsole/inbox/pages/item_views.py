"""One item's pages: detail, status JSON, revision history, and the POSTs that act on it.

Every view fetches the item through :func:`selectors.item_for` first (404 outside the user's
queues, the same answer as for a missing item; ``404 item_unknown`` JSON to a JSON caller of
the status JSON and the actions). Nothing changes on GET; every action is a POST
with the CSRF token, answered with a redirect or the detail page and the status code of
its refusal (``view_helpers.refusal``).
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from engine import AlreadyDecidedError, AnswerInvalidError, EngineError

from ...audit.services import audit_record
from ...json_input import UnstorableValueError, check_storable
from ...workflow_sessions.models import InterruptStatus
from ...workflow_sessions.outbox import relay
from ...workflow_sessions.outcome import session_outcome
from ...workflow_sessions.services import session_retry
from ...workflows import UnknownWorkflowError
from ..errors import DecisionError, InboxConflict
from ..items import claims
from ..items.decisions import interrupt_decide
from ..items.permissions import require_retry_permission
from ..items.receipts import receipt, refusal_record
from ..items.refusals import retried_request
from ..items.selectors import item_for
from ..items.serializers import list_entry
from ..items.standing_grants import standing_from_post
from ..models import Queue
from ..pictures.serving import allow_picture_styles
from .confirmations import confirmation
from .decided import render_decision
from .drafts import revisions
from .view_helpers import detail_context, json_404, refusal, wants_json

REFUSALS = (
    AlreadyDecidedError,
    AnswerInvalidError,
    DecisionError,
    EngineError,
    InboxConflict,
    PermissionDenied,
    UnknownWorkflowError,
)


@login_required
@require_GET
@allow_picture_styles
def detail(request: HttpRequest, pk: int) -> HttpResponse:
    """The item, its kind's facts, the workflow picture, and what the user may do with it."""
    item = item_for(request.user, pk)
    with transaction.atomic():
        audit_record(action="interrupt.view", user=request.user, target=item, request=request)
    return render(request, "inbox/detail.html", detail_context(request, item))


@login_required
@json_404
@require_GET
def status_json(request: HttpRequest, pk: int) -> JsonResponse:
    """The item's summary now (a detail page left open catches up with it after a reconnect),
    its session's status and, once the session ended, its result; once decided, the page's
    decision section (``decision``: autoescaped HTML, ``decided.render_decision``; else null), which
    a page left open shows in place.

    ``{"item": list entry, "version": int, "session": session_outcome, "decision": str | None}``.
    """
    item = item_for(request.user, pk)
    return JsonResponse(
        {
            "item": list_entry(item),
            "version": item.queue.version,
            "session": session_outcome(item.session),
            "decision": render_decision(item),
        }
    )


@login_required
@require_GET
def history(request: HttpRequest, pk: int) -> HttpResponse:
    """Every draft of the item's session, each with its diff against the one before."""
    item = item_for(request.user, pk)
    return render(request, "inbox/history.html", {"item": item, "revisions": revisions(item)})


def _form_data(request: HttpRequest) -> dict[str, str]:
    return {key: request.POST.get(key, "") for key in request.POST if key == "f" or key.startswith("f.")}


def check_posted(request: HttpRequest) -> None:
    """Refuse a posted field (feedback, reason, draft, form answer) holding a NUL character."""
    try:
        check_storable(dict(request.POST.lists()))
    except UnstorableValueError as exc:
        field = exc.path[0] if exc.path else "a field"
        message = f"Remove the NUL character from {field}: it cannot be stored; nothing was recorded."
        raise DecisionError(message) from None


@login_required
@json_404
@require_POST
@allow_picture_styles
def decide(request: HttpRequest, pk: int) -> HttpResponse:
    """Approve, reject (with a reason), send feedback, or answer the generated form; an approval
    may grant a standing approval (``standing``, ``standing_scope``, ``standing_hours``) and, under
    four eyes, be the first of two (recorded; the item stays pending).

    404 outside the user's queues; 400 for an incomplete decision, an answer that fails the
    schema (the form comes back with its errors), fields that contradict each other
    (``decision_ambiguous``: feedback with Approve or Reject, or with an edited draft; the page
    comes back with what was typed and the error next to each field) or a field holding a NUL
    character; 403 when the
    requester approves a policy-governed request; 409 when someone decided first (a policy too:
    the attempt is recorded), the same person approves a four-eyes request twice, someone else
    holds the claim, the item expired, was cancelled (``cancelled``: by its client or a manager)
    or was superseded, the workflow is gone, the posted
    ``interrupt_id`` is not the item's (``interrupt_unknown``) or the posted ``args_digest`` not
    the call's (``args_changed``). Nothing is stored on any refusal; those of a decision bound to
    a call are audited (``interrupt.refuse``). JSON: ``{"item": list entry, "receipt":
    receipts.receipt}`` (and ``"approvals"`` after a four-eyes first approval), also for the same
    decision sent again. A page: 302 to the inbox, or after feedback to the page that waits for
    the session's next draft (``feedback_views.after_feedback``).
    """
    item = item_for(request.user, pk)
    action = request.POST.get("action", "")
    edited = request.POST.get("draft")  # the draft box, edited or not (items.ambiguity.draft_edit)
    try:
        check_posted(request)
        standing = standing_from_post(request.POST) if action == "approve" else None
        interrupt_decide(
            interrupt=item,
            user=request.user,
            action=action,
            text=request.POST.get("feedback", ""),
            reason=request.POST.get("reason", ""),
            draft=edited,
            form=_form_data(request),
            interrupt_id=request.POST.get("interrupt_id", ""),
            args_digest=request.POST.get("args_digest", ""),
            args=request.POST.get("args") if request.POST.get("edit_args") else None,
            request=request,
            standing=standing,
        )
    except REFUSALS as exc:
        refusal_record(exc, user=request.user, target=item, interrupt_id=item.interrupt_id, request=request)
        return refusal(request, item, exc, form_data=_form_data(request))
    row = item.session_interrupt
    # Four eyes: the first of two approvals leaves the session's interrupt pending (a decision the
    # item has not heard of yet, relayed right after its commit, does not).
    first = action == "approve" and item.is_pending and (row is None or row.status == InterruptStatus.PENDING)
    if wants_json(request):
        extra = {"approvals": {"given": 1, "required": 2}} if first else {}
        return JsonResponse({"item": list_entry(item), "receipt": receipt(row) if row is not None else None, **extra})
    if action == "revise":  # the page that waits for the next draft and opens it
        return redirect("inbox:after_feedback", pk=item.pk)
    if first:
        messages.success(request, "First approval recorded (1 of 2): a second, different person must approve.")
        return redirect("inbox:index")
    messages.success(request, confirmation(item, action, draft=edited))
    return redirect("inbox:index")


def _claim_action(request: HttpRequest, pk: int, act: str) -> HttpResponse:
    item = item_for(request.user, pk)
    try:
        if act == "claim":
            item = claims.interrupt_claim(interrupt=item, user=request.user, request=request)
            note = "You claimed this request."
        elif act == "unclaim":
            item = claims.interrupt_unclaim(interrupt=item, user=request.user, request=request)
            note = "You released this request."
        else:
            item = claims.interrupt_take_over(interrupt=item, user=request.user, request=request)
            note = "You took this request over."
    except REFUSALS as exc:
        return refusal(request, item, exc)
    if wants_json(request):
        return JsonResponse({"item": list_entry(item)})
    messages.success(request, note)
    return redirect("inbox:detail", pk=item.pk)


@login_required
@json_404
@require_POST
@allow_picture_styles
def claim(request: HttpRequest, pk: int) -> HttpResponse:
    return _claim_action(request, pk, "claim")


@login_required
@json_404
@require_POST
@allow_picture_styles
def unclaim(request: HttpRequest, pk: int) -> HttpResponse:
    return _claim_action(request, pk, "unclaim")


@login_required
@json_404
@require_POST
@allow_picture_styles
def take_over(request: HttpRequest, pk: int) -> HttpResponse:
    return _claim_action(request, pk, "take_over")


@login_required
@json_404
@require_POST
@allow_picture_styles
def reassign(request: HttpRequest, pk: int) -> HttpResponse:
    """A queue manager gives the item to a reviewer (``to_user``) or another queue (``to_queue``)."""
    item = item_for(request.user, pk)
    username = request.POST.get("to_user", "").strip()
    slug = request.POST.get("to_queue", "").strip()
    to_user = get_user_model().objects.filter(username=username).first() if username else None
    to_queue = Queue.objects.filter(slug=slug).first() if slug else None
    try:
        if (username and to_user is None) or (slug and to_queue is None):
            raise DecisionError("No such reviewer or queue.")
        item = claims.interrupt_reassign(
            interrupt=item, user=request.user, to_user=to_user, to_queue=to_queue, request=request
        )
    except REFUSALS as exc:
        return refusal(request, item, exc)
    if wants_json(request):
        return JsonResponse({"item": list_entry(item)})
    where = to_user.get_username() if to_user else to_queue.name if to_queue else ""
    messages.success(request, f"Reassigned to {where}.")
    return redirect("inbox:index") if to_queue else redirect("inbox:detail", pk=item.pk)


@login_required
@json_404
@require_POST
@allow_picture_styles
def retry(request: HttpRequest, pk: int) -> HttpResponse:
    """A manager of the workflow's queue runs the item's failed session again from its last checkpoint.

    404 outside the user's queues; 403 for anyone else; 409 when the session has not failed (or
    someone retried it first) or is running. When the failure had cancelled this item, the Retry
    asks it again as a new item: the answer names that one (``item``; JSON ``{"item", "retried_from",
    "session"}``, a page: 302 to it).
    """
    item = item_for(request.user, pk)
    try:
        require_retry_permission(request.user, item.session)
        session_retry(session=item.session, user=request.user, request=request)
    except REFUSALS as exc:
        return refusal(request, item, exc)
    # The retry's relay built the new item when it committed; inside a caller's transaction
    # (a test's) it has not run yet: run it here, in that transaction, so the answer names it.
    relay(session_id=item.session_id)
    item.refresh_from_db()
    new = retried_request(item)  # the request asked again, when the failure had cancelled this one
    if wants_json(request):
        shown = new or item
        return JsonResponse(
            {"item": list_entry(shown), "retried_from": item.pk, "session": session_outcome(shown.session)}
        )
    messages.success(request, "The session runs again from its last checkpoint.")
    return redirect("inbox:detail", pk=(new or item).pk)
