"""The "New request" pages: pick a workflow, fill in its input form, then follow the new session.

| URL | what |
|---|---|
| ``GET /new/`` | the workflows the user may start (:func:`starts.startable_specs`) |
| ``GET /new/<workflow>/`` | the form generated from the workflow's ``input_schema`` |
| ``POST /new/<workflow>/`` | check (400: the form with its field errors, nothing stored), start, 302 to the session |
|  | the same form again (its ``start_token``): 302 to the session it started (``start_tokens.py``) |
| ``GET /sessions/<id>/`` | 302 to its item once it asks the user; else its status, kept live by ``follow.js`` |
| ``GET /sessions/<id>/status.json`` | ``{"session": session_outcome, "item_url": str | null, "waiting_in": [str]}`` |
| ``POST /sessions/<id>/retry/`` | a manager of its workflow's queue retries the failed session, 302 to it |

A workflow the user may not start is a 404, the same as an unknown one; a session is visible to
the user who started it here, to managers of its workflow's queue (a session that failed before
its first request has no item: this page is where they retry it) and superusers, else 404. Every
value shown may come from the user or an LLM: templates escape it, ``follow.js`` sets it with
``textContent``.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from engine import EngineError, WorkflowDataError

from ..inbox.errors import DecisionError
from ..inbox.items.permissions import can_retry, manages_workflow, require_retry_permission
from ..inbox.items.selectors import visible_interrupts_for
from ..inbox.models import Item, ItemStatus
from ..inbox.pages.schema_form import form_fields, validate_value
from ..json_errors import error_response
from ..json_input import UnstorableValueError, check_storable
from ..workflow_sessions.models import WorkflowSession
from ..workflow_sessions.outcome import session_outcome
from ..workflow_sessions.services import session_retry
from ..workflows import UnknownWorkflowError, WorkflowSpec
from .start_tokens import StartTokenError, issue_token, start_once
from .starts import console_user_id, input_json_schema, session_start_by_user, startable_spec, startable_specs


@login_required
@require_GET
def new_request(request: HttpRequest) -> HttpResponse:
    """The workflows the user may start, each with its title and description."""
    return render(request, "console/new.html", {"specs": startable_specs(request.user)})


def _spec_or_404(request: HttpRequest, workflow: str) -> WorkflowSpec:
    try:
        return startable_spec(request.user, workflow)
    except UnknownWorkflowError:
        raise Http404("No such workflow.") from None


def _form_data(request: HttpRequest) -> dict[str, str]:
    return {key: request.POST.get(key, "") for key in request.POST if key == "f" or key.startswith("f.")}


FIX_FIELDS = "Correct the highlighted fields; nothing was started."
STALE_FORM = "This form had expired; check it and start again: nothing was started."


def _render_form(
    request: HttpRequest,
    spec: WorkflowSpec,
    data: dict[str, str],
    errors: list[dict[str, Any]],
    message: str,
    status: int,
) -> HttpResponse:
    schema = input_json_schema(spec) or {}
    context = {
        "spec": spec,
        "form": form_fields(schema, data, errors),
        "error": message,
        "start_token": issue_token(request.user, spec.name),  # type: ignore[arg-type]
    }
    return render(request, "console/new_form.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def new_request_form(request: HttpRequest, workflow: str) -> HttpResponse:
    """The input form of ``workflow``; on POST, start a session with its value.

    400 (the form again, with each field's error): a field cannot be read, holds a NUL
    character, or the value fails the input schema (checked with ``jsonschema``, then by the
    workflow's own pydantic model), or the form's ``start_token`` is missing, forged or expired
    (the form again with a fresh token); nothing is stored. 404: unknown or not startable by the
    user. A POST of a form whose token already started a session is sent to that session.
    """
    spec = _spec_or_404(request, workflow)
    if request.method == "GET":
        return _render_form(request, spec, {}, [], "", 200)
    data = _form_data(request)

    def start() -> WorkflowSession:
        check_storable(data)
        value = validate_value(input_json_schema(spec) or {}, data)
        return session_start_by_user(user=request.user, workflow=spec.name, data=value, request=request)

    try:
        session, _ = start_once(request.user, spec.name, request.POST.get("start_token", ""), start)  # type: ignore[arg-type]
    except StartTokenError:
        return _render_form(request, spec, data, [], STALE_FORM, 400)
    except UnstorableValueError:
        message = "Remove the NUL character from the form: it cannot be stored; nothing was started."
        return _render_form(request, spec, data, [], message, 400)
    except DecisionError as exc:
        return _render_form(request, spec, data, exc.errors, FIX_FIELDS, 400)
    except WorkflowDataError as exc:
        errors = list(exc.details.get("errors") or [])
        return _render_form(request, spec, data, errors, FIX_FIELDS, 400)
    return redirect("session_follow", session_id=session.id)


def _session_for(request: HttpRequest, session_id: str) -> WorkflowSession:
    """The session if the user started it from the console, manages its workflow's queue (or is a
    superuser), else 404."""
    session = WorkflowSession.objects.filter(pk=session_id).first()
    user = request.user
    if session is None or not (
        session.user_id == console_user_id(user)  # type: ignore[arg-type]
        or manages_workflow(user, session.workflow)
    ):
        raise Http404("No such session.")
    return session


def _follow(request: HttpRequest, session: WorkflowSession) -> dict[str, Any]:
    pending = Item.objects.filter(session=session, status=ItemStatus.PENDING).select_related("queue")
    mine = visible_interrupts_for(request.user).filter(session=session, status=ItemStatus.PENDING)
    first = mine.order_by("created_at", "id").first()
    return {
        "session": session_outcome(session),
        "item_url": f"/inbox/items/{first.pk}/" if first is not None else None,
        "waiting_in": sorted({i.queue.name for i in pending}) if first is None else [],
    }


@login_required
@require_GET
def session_follow(request: HttpRequest, session_id: str) -> HttpResponse:
    """Where a session the user started stands: its item once it asks them, else its status."""
    session = _session_for(request, session_id)
    follow = _follow(request, session)
    if follow["item_url"]:
        return redirect(follow["item_url"])
    return _page(request, session, follow)


def _page(
    request: HttpRequest, session: WorkflowSession, follow: dict[str, Any], error: str = "", status: int = 200
) -> HttpResponse:
    """The session page: its status, its result once ended, Retry for its managers once failed."""
    context = {"session": session, "follow": follow, "can_retry": can_retry(request.user, session), "error": error}
    return render(request, "console/session.html", context, status=status)


@login_required
@require_GET
def session_status_json(request: HttpRequest, session_id: str) -> JsonResponse:
    """The session's status, result once ended, and the URL of its item once it asks the user."""
    return JsonResponse(_follow(request, _session_for(request, session_id)))


@login_required
@require_POST
def session_retry_view(request: HttpRequest, session_id: str) -> HttpResponse:
    """Run the failed session again from its last checkpoint (``session_retry``: audited), then
    follow it (302 to this page, which opens its request once it asks the user).

    404: the user may not see the session; 403 (the page with the reason): they do not manage its
    workflow's queue; 409: it has not failed (someone retried it first), it is running, or its
    workflow (version) is gone. ``Accept: application/json``: ``{"session", "item_url",
    "waiting_in"}`` as ``status.json``, or ``{"error": {"code", "message"}}`` with the same status codes.
    """
    session = _session_for(request, session_id)
    try:
        require_retry_permission(request.user, session)
        session_retry(session=session, user=request.user, request=request)
    except PermissionDenied as exc:
        return _refused(request, session, 403, "forbidden", str(exc))
    except (EngineError, UnknownWorkflowError) as exc:
        code = exc.code if isinstance(exc, EngineError) else "workflow_gone"
        return _refused(request, session, 409, code, getattr(exc, "message", str(exc)))
    session.refresh_from_db()
    if "application/json" in request.headers.get("Accept", ""):
        return JsonResponse(_follow(request, session))
    messages.success(request, "The session runs again from its last checkpoint.")
    return redirect("session_follow", session_id=session.id)


def _refused(request: HttpRequest, session: WorkflowSession, status: int, code: str, message: str) -> HttpResponse:
    if "application/json" in request.headers.get("Accept", ""):
        return error_response(status, code, message)
    session.refresh_from_db()
    return _page(request, session, _follow(request, session), error=message, status=status)
