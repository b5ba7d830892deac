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
    "ResumeIn",
    "ResumeOut",
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


class StartOut(Schema):
    session_id: str
    status: str
    url: str


class ResumeIn(_In):
    """Answer an interrupt: ``interrupt_id`` may be left out when exactly one is pending."""

    interrupt_id: str | None = Field(default=None, min_length=1, max_length=200)
    payload: JsonValue = Field(examples=[{"status": "approved"}])


class ResumeOut(Schema):
    session_id: str
    answered: list[str]
    status: str


class CancelIn(_In):
    reason: str = Field(default="", max_length=500)


class CancelOut(Schema):
    session_id: str
    status: str


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
    decision: str
    decided_by: str | None = None
    decided_at: str | None = None
    created_at: str


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
