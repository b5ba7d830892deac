"""Request and response bodies of the API (they make its OpenAPI document)."""

from __future__ import annotations

from typing import Any, Literal

from ninja import Field, Schema
from pydantic import ConfigDict, JsonValue, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from ..json_input import UnstorableValueError, check_storable

__all__ = [
    "CancelIn",
    "CancelOut",
    "ErrorOut",
    "InterruptOut",
    "InterruptsOut",
    "ReceiptOut",
    "ResumeIn",
    "ResumeOut",
    "ReviewIn",
    "ReviewOut",
    "SessionOut",
    "StartIn",
    "StartOut",
]


class _In(Schema):
    model_config = ConfigDict(extra="forbid")

    @field_validator("*")
    @classmethod
    def _storable(cls, value: Any, info: ValidationInfo) -> Any:
        """No NUL characters, unpaired surrogates or non-finite numbers anywhere (see ``json_input``)."""
        try:
            check_storable(value, [info.field_name] if info.field_name else [])
        except UnstorableValueError as exc:
            raise PydanticCustomError("unstorable", "{message}", {"message": exc.message}) from None
        return value


class StartIn(_In):
    """Start a session: the registered workflow's name and its input (checked against its schema)."""

    workflow: str = Field(min_length=1, max_length=100, examples=["refund-approval"])
    input: JsonValue = Field(examples=[{"order_id": "A-1001", "amount": 250.0, "reason": "Arrived broken"}])
    correlation_key: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="Optional: the thread this input belongs to. While a session started with the same key is "
        "open, the workflow's on_arrival applies: reject (409 session_waiting), queue (202, status queued) or "
        "supersede (the open session is cancelled; 202 with the new one).",
    )


class StartOut(Schema):
    session_id: str = Field(description="The session started; queued: the open session the input waits behind.")
    status: str
    url: str
    arrival_id: int | None = Field(default=None, description="Queued: the id of the kept input.")
    superseded: list[str] = Field(default_factory=list, description="Supersede: the sessions cancelled.")


class ResumeIn(_In):
    """Answer an interrupt: ``interrupt_id`` may be left out when exactly one is pending, except
    for an approval of a tool call, which names its ``interrupt_id`` and the ``args_digest`` it
    was shown in ``payload`` (``{"confirmed": true, "args_digest": "…", "args"?: {edited}}``)."""

    interrupt_id: str | None = Field(default=None, min_length=1, max_length=200)
    payload: JsonValue = Field(
        examples=[{"status": "approved"}, {"confirmed": True, "args_digest": "<the interrupt's args_digest>"}]
    )


class ReceiptOut(Schema):
    """Who decided what and when: the first decision, also when the same answer is sent again."""

    interrupt_id: str
    decision: str
    decided_by: str | None = None
    decided_at: str | None = None
    args_digest: str | None = None
    edited_args_digest: str | None = None


class ResumeOut(Schema):
    session_id: str
    answered: list[str]
    status: str = Field(description='"queued" (202), or "already_decided" (200: the same answer sent again)')
    receipt: ReceiptOut | None = None


class CancelIn(_In):
    reason: str = Field(default="", max_length=500)


class CancelOut(Schema):
    session_id: str
    status: str


class ApproverOut(Schema):
    by: str = Field(description="Who approved: a username.")
    at: str = Field(description="When (ISO 8601).")
    reason: str = Field(description="Their reason, as given (may be empty).")


class ApprovalsOut(Schema):
    required: int = Field(description="Approvals the request needs (2: four eyes).")
    rule: str = Field(description="The approval rule that asked for them.")
    approvers: list[ApproverOut] = Field(description="Who approved so far, first approver first.")


class InterruptOut(Schema):
    id: str
    session_id: str
    workflow: str
    kind: str
    function_name: str
    status: str
    queue: str
    message: str
    payload: Any = None
    response_schema: Any = None
    response: Any = None
    args_digest: str | None = Field(
        None,
        description=(
            "A tool call's confirmation or long-running result: the hex SHA-256 of the canonical JSON (sorted keys,"
            ' no whitespace) of {"name": tool, "args": arguments} as shown. An approval names it back in its'
            " payload's args_digest; the resume is refused (409 args_changed) when it differs."
        ),
    )
    decision: str
    decided_by: str | None = Field(
        default=None, description='Who decided (under four eyes, both approvers: "ana and bob").'
    )
    decided_at: str | None = None
    approvals: ApprovalsOut | None = Field(
        default=None,
        description="Under four eyes (a policy asks two different people): both approvers, in order; else null.",
    )
    created_at: str
    reason: str | None = Field(default=None, description="A rejection's or a cancel's reason.")
    claimed_by: str | None = Field(default=None, description="The reviewer whose claim is in force.")
    deferred_until: str | None = Field(default=None, description="The due time a defer put the request off to.")


class InterruptsOut(Schema):
    count: int
    interrupts: list[InterruptOut]


class SessionOut(Schema):
    id: str
    workflow: str
    status: str
    title: str
    state: dict[str, Any]
    output: Any = Field(
        None,
        description="The workflow's final result once the session completed (its terminal node's output), else null.",
    )
    error: Any = None
    result: str | None = Field(
        None,
        description=(
            "For people, once the session ended: a text output, else the failure's sentence, else the"
            " session's last message (the email review's \"Draft approved and sent successfully.\")."
        ),
    )
    created_at: str
    updated_at: str
    interrupts: list[InterruptOut]
    events: list[dict[str, Any]] = Field(description="The session's events in ADK session JSON (camelCase).")


class ErrorBody(Schema):
    model_config = ConfigDict(extra="allow")
    code: str
    message: str


class ErrorOut(Schema):
    error: ErrorBody


InterruptStatusParam = Literal["pending", "resolved", "cancelled"]


class ReviewIn(_In):
    """Ask a person for a review (docs/reviews.md)."""

    title: str = Field(min_length=1, max_length=200, examples=["Refund A-1001"])
    message: str = Field(min_length=1, max_length=10_000, examples=["Approve a $250 refund?"])
    queue: str = Field(min_length=1, max_length=100, examples=["finance"])
    payload: JsonValue = Field(default=None, examples=[{"order_id": "A-1001", "amount": 250}])
    response_schema: JsonValue = Field(default=None, description="A JSON Schema object; the form is generated from it.")
    kind: Literal["text", "confirm", "draft", "form"] | None = None
    due_in_seconds: int | None = Field(default=None, gt=0, le=366 * 86_400)
    on_expiry: Literal["", "escalate", "timeout"] = ""
    metadata: dict[str, JsonValue] = Field(default_factory=dict)
    revision_of: str | None = Field(default=None, min_length=1, max_length=64)
    callback_url: str | None = Field(default=None, min_length=1, max_length=500)


class ReviewDecisionOut(Schema):
    action: str
    answer: Any = None
    reason: str | None = None
    feedback: str | None = None
    edits: dict[str, Any] | None = None
    by: str | None = None
    at: str | None = None


class ReviewCancelledOut(Schema):
    by: str
    at: str | None = None
    reason: str | None = None


class ReviewOut(Schema):
    id: str
    status: Literal["pending", "decided", "cancelled", "expired", "superseded"]
    title: str
    message: str
    queue: str
    kind: str
    payload: Any = None
    response_schema: Any = None
    metadata: dict[str, Any]
    created_at: str
    due_at: str | None = None
    revision_of: str | None = None
    superseded_by: str | None = None
    url: str
    inbox_url: str | None = None
    session_id: str
    decision: ReviewDecisionOut | None = None
    cancelled: ReviewCancelledOut | None = None
