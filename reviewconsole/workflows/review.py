"""The review request: the built-in one-step workflow behind ``POST /api/v1/reviews`` (issue 14).

The console registers it itself, whatever ``REVIEWCONSOLE["WORKFLOWS"]`` says (``registry.py``
loads this module first), so a review is an ordinary session: the audit log, the admin timeline,
expiry and escalation, claims, bulk actions and live push apply unchanged.

START → ``ask_review``: the node asks with the engine's ``RequestInput`` built from the session's
input (:class:`ReviewInput`), the review's id as the interrupt's wire id; the reviewer's answer,
as the engine hands it on (answer-as-output), is the session's output. ``metadata`` carries what
the inbox reads: ``queue``, ``kind`` (one of :data:`REQUEST_KINDS`' values), ``bulk_approve``
(``confirm`` reviews only), ``due_in_seconds``,
``on_expiry``, and ``supersedes_session`` for a revision (the inbox's "superseded: a newer request
exists" and the page's diff of the payload).

| API ``kind`` | request kind | the reviewer |
|---|---|---|
| ``text`` | ``review_text`` | approves, rejects or sends feedback (free text) |
| ``confirm`` | ``review_confirm`` | approves or rejects (with a reason) |
| ``draft`` | ``review_draft`` | edits ``payload["draft"]`` and approves, rejects, or sends feedback |
| ``form`` | ``review_form`` | fills the form generated from ``response_schema`` |
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from . import RequestInput, Workflow, WorkflowSpec

__all__ = ["KINDS", "NAME", "REQUEST_KINDS", "WORKFLOWS", "ReviewInput", "build"]

NAME = "review"
"""The workflow's registered name (its sessions are the reviews)."""

KINDS = ("text", "confirm", "draft", "form")
REQUEST_KINDS = {kind: f"review_{kind}" for kind in KINDS}
"""API ``kind`` → the inbox's request kind (``inbox/items/actions.py`` registers these)."""


class Revision(BaseModel):
    """The review a revision replaces: its id and its session."""

    model_config = ConfigDict(extra="forbid")

    review: str = Field(max_length=64)
    session: str = Field(max_length=64)


class ReviewInput(BaseModel):
    """A review session's input, written by the API's review service (already checked there)."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1, max_length=200)
    review_id: str = Field(min_length=1, max_length=64)
    message: str = Field(min_length=1, max_length=10_000)
    queue: str = Field(min_length=1, max_length=100)
    kind: Literal["text", "confirm", "draft", "form"] = "confirm"
    payload: JsonValue = None
    response_schema: dict[str, JsonValue] | None = None
    due_in_seconds: int | None = Field(default=None, gt=0)
    on_expiry: Literal["", "escalate", "timeout"] = ""
    revision_of: Revision | None = None


def ask_review(node_input: Any) -> RequestInput:
    """Ask the review's queue; the answer becomes this node's output, the session's output."""
    asked = ReviewInput.model_validate(node_input)
    # A yes/no question may be approved with others in the inbox's bulk action; a draft, a form
    # or free text is read (and edited, filled) on its own page.
    metadata: dict[str, Any] = {
        "queue": asked.queue,
        "kind": REQUEST_KINDS[asked.kind],
        "bulk_approve": asked.kind == "confirm",
    }
    if asked.due_in_seconds is not None:
        metadata["due_in_seconds"] = asked.due_in_seconds
        metadata["on_expiry"] = asked.on_expiry
    if asked.revision_of is not None:
        metadata["supersedes_session"] = asked.revision_of.session
    return RequestInput(
        interrupt_id=asked.review_id,
        message=asked.message,
        payload=asked.payload,
        response_schema=asked.response_schema if asked.kind == "form" else None,
        metadata=metadata,
    )


def build(model: Any = None, *, name: str = "review") -> Workflow:
    """The workflow (it calls no model)."""
    return Workflow(
        name,
        edges=[("START", ask_review)],
        input_schema=ReviewInput,
        description="A review requested through the API: one person's decision.",
    )


WORKFLOWS = [
    WorkflowSpec(
        name=NAME,
        title="Review request",
        queue="triage",
        build=build,
        input_schema=ReviewInput,
        description="A review an outside agent asked for through POST /api/v1/reviews.",
        builtin=True,
    )
]
