"""The API's operations (``/api/v1/``): start, read, list interrupts, resume, cancel.

Each view authenticates (``request.auth`` is the :class:`ApiClient`), fetches through the
client's scope first, and calls a service; sessions and interrupts are serialised by
``inbox.items.serializers`` (``SessionOut`` and ``InterruptOut`` pick their fields); refusals are
raised and mapped in ``errors.py``.
Writes take an optional ``Idempotency-Key`` header (see ``idempotency.py``).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Field as NinjaField
from ninja import Header, Query, Router, Schema, Status

from engine import AlreadyDecidedError

from ..inbox.errors import DecisionRefusedError
from ..inbox.items.decision_checks import audit_refusal
from ..inbox.items.policy_gate import record_refused
from ..inbox.items.serializers import items_json, session_with_items
from ..workflow_sessions.arrivals import SessionWaitingError, arrival_rejected
from .idempotency import idempotent, request_hash
from .schemas import (
    CancelIn,
    CancelOut,
    ErrorOut,
    InterruptsOut,
    InterruptStatusParam,
    ResumeIn,
    ResumeOut,
    SessionOut,
    StartIn,
    StartOut,
)
from .selectors import interrupts_for, session_for
from .services import api_refusal_record, api_session_cancel, api_session_resume, api_session_start

router = Router(tags=["sessions"])

ERRORS: dict[int, Any] = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 409: ErrorOut, 422: ErrorOut}
KEY = Header(
    default=None,
    alias="Idempotency-Key",
    description="Optional (≤ 200 chars): a retry with the same key and body gets the first answer; "
    "without it the write is not deduplicated.",
)


def replayable(response: HttpResponse, answer: tuple[int, dict[str, Any]]) -> Status[Any]:
    """The ``(status, body)`` of ``idempotent`` as a response, ``Idempotent-Replayed`` when it was."""
    status, body = answer
    if body.pop("_replayed", False):
        response["Idempotent-Replayed"] = "true"
    return Status(status, body)


@router.post("/sessions", response={202: StartOut, **ERRORS}, summary="Start a session")
def start(request: HttpRequest, response: HttpResponse, body: StartIn, idempotency_key: str | None = KEY) -> Any:
    """Start a session of ``workflow`` with ``input``; its run is queued (202).

    With ``correlation_key``, input for a key whose session is open follows the workflow's
    ``on_arrival``: 409 ``session_waiting`` (reject), 202 ``status: "queued"`` with ``arrival_id``
    (queue: started once that session ends), or 202 with the new session and ``superseded``."""
    client = request.auth  # type: ignore[attr-defined]

    def action() -> tuple[int, dict[str, Any]]:
        arrived = api_session_start(
            client=client,
            workflow=body.workflow,
            data=body.input,
            request=request,
            correlation_key=body.correlation_key,
        )
        session = arrived.session
        answer: dict[str, Any] = {
            "session_id": session.id,
            "status": session.status,
            "url": f"/api/v1/sessions/{session.id}",
        }
        if arrived.arrival is not None:
            answer.update(status="queued", arrival_id=arrived.arrival.pk)
        if arrived.superseded:
            answer["superseded"] = arrived.superseded
        return 202, answer

    digest = request_hash("POST", request.path, body.model_dump())
    try:
        answer = idempotent(client=client, key=idempotency_key, digest=digest, action=action)
    except SessionWaitingError as exc:
        arrival_rejected(exc, actor=f"client:{client.name}", request=request)
        raise
    return replayable(response, answer)


@router.get(
    "/sessions/{session_id}", response={200: SessionOut, **ERRORS}, summary="Read a session", url_name="session_read"
)
def read(request: HttpRequest, session_id: str) -> Any:
    """Status, state, interrupts and events (ADK session JSON) of a session."""
    return Status(200, session_with_items(session_for(request.auth, session_id)))  # type: ignore[attr-defined]


class InterruptFilter(Schema):
    workflow: str | None = NinjaField(default=None, max_length=100)
    queue: str | None = NinjaField(default=None, max_length=100)
    status: InterruptStatusParam = "pending"
    limit: int = NinjaField(default=50, ge=1, le=200)
    offset: int = NinjaField(default=0, ge=0, le=1_000_000)


@router.get("/interrupts", response={200: InterruptsOut, **ERRORS}, summary="List interrupts")
def interrupts(request: HttpRequest, filters: Query[InterruptFilter]) -> Any:
    """Interrupts of the client's workflows (pending by default), oldest first."""
    rows = interrupts_for(request.auth, workflow=filters.workflow, queue=filters.queue, status=filters.status)  # type: ignore[attr-defined]
    page = rows[filters.offset : filters.offset + filters.limit]
    return Status(200, {"count": rows.count(), "interrupts": items_json(list(page))})


@router.post(
    "/sessions/{session_id}/resume", response={200: ResumeOut, 202: ResumeOut, **ERRORS}, summary="Resume a session"
)
def resume(
    request: HttpRequest, response: HttpResponse, session_id: str, body: ResumeIn, idempotency_key: str | None = KEY
) -> Any:
    """Answer an interrupt with ``payload`` (a long-running tool's late result, or an answer); the run is queued.

    Without ``interrupt_id`` the only pending interrupt is answered; with several pending the
    answer is refused (400 ``interrupt_ambiguous`` listing ``pending``). The first answer wins:
    a later one gets 409 ``interrupt_decided`` naming who answered and when (an approval policy
    too: the attempt is recorded, ``interrupt.decide_refused``); the same answer sent again by the
    same client gets 200 with the first decision's ``receipt`` (nothing stored). An approval policy
    under four eyes refuses an approval: 409 ``four_eyes_required`` (two people approve in the
    inbox). A check of the workflow that refuses the decision answers 400 ``decision_refused``
    (audited once the transaction rolled back). An approval of a tool call names its
    ``interrupt_id`` and ``payload.args_digest`` (400 ``args_digest_required``); a digest other
    than the call's is 409 ``args_changed``, an id the session never had 409 ``interrupt_unknown``;
    these refusals are audited (``interrupt.refuse``).
    """
    client = request.auth  # type: ignore[attr-defined]
    session = session_for(client, session_id)

    def action() -> tuple[int, dict[str, Any]]:
        done = api_session_resume(
            client=client, session=session, interrupt_id=body.interrupt_id, payload=body.payload, request=request
        )
        status = "already_decided" if done.repeated else "queued"
        body_out = {"session_id": session.id, "answered": done.answered, "status": status, "receipt": done.receipt}
        return (200 if done.repeated else 202), body_out

    digest = request_hash("POST", request.path, body.model_dump())
    try:
        answer = idempotent(client=client, key=idempotency_key, digest=digest, action=action)
    except AlreadyDecidedError as exc:  # after its transaction rolled back: a policy's decision stands, recorded
        wire = body.interrupt_id or exc.details.get("interrupt_id")
        record_refused(session.id, wire, answer=body.payload, actor=f"client:{client.name}", request=request)
        api_refusal_record(exc, client=client, session=session, interrupt_id=body.interrupt_id, request=request)
        raise
    except DecisionRefusedError as exc:
        audit_refusal(exc, actor=f"client:{client.name}", request=request)
        raise
    except Exception as exc:
        api_refusal_record(exc, client=client, session=session, interrupt_id=body.interrupt_id, request=request)
        raise
    return replayable(response, answer)


@router.post("/sessions/{session_id}/cancel", response={200: CancelOut, **ERRORS}, summary="Cancel a session")
def cancel(
    request: HttpRequest, response: HttpResponse, session_id: str, body: CancelIn, idempotency_key: str | None = KEY
) -> Any:
    """Cancel a session: its pending interrupts are cancelled and it never runs again."""
    client = request.auth  # type: ignore[attr-defined]
    session = session_for(client, session_id)

    def action() -> tuple[int, dict[str, Any]]:
        status = api_session_cancel(client=client, session=session, reason=body.reason, request=request)
        return 200, {"session_id": session.id, "status": status}

    digest = request_hash("POST", request.path, body.model_dump())
    return replayable(response, idempotent(client=client, key=idempotency_key, digest=digest, action=action))
