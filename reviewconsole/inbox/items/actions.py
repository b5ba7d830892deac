"""What a reviewer may do with an item: each request kind declares its decisions.

A request kind (``metadata["kind"]``, else the workflow's ``kind``) is registered in
:data:`REQUEST_KINDS` with the decisions it supports and how a raw answer (from the API or
AG-UI) reads as one of them. Outside code adds its own with :func:`register_request_kind`.

| request kind | decisions | a raw answer reads as |
|---|---|---|
| ``email_draft`` (free-text review) | ``approve``, ``reject``, ``revise`` | ``read_review``: approve, reject, text |
| ``vip_discount`` (confirmation) | ``approve``, ``reject`` (decline, reason) | ``read_yes_no``: yes/no, a boolean |
| ``refund``, ``support_case`` (tool calls) | ``approve``, ``reject`` | the engine's confirmation / status |
| ``incident_triage`` (structured form) | ``answer`` (the generated form) | the form's value |
| ``review_text`` (an API review, free text) | ``approve``, ``reject``, ``revise`` | ``read_review`` |
| ``review_confirm`` (an API review, confirmation) | ``approve``, ``reject`` (reason) | ``read_yes_no`` |
| ``review_draft`` (an API review of a draft) | ``approve`` (edited), ``reject``, ``revise`` | ``read_review`` |
| ``review_form`` (an API review with a ``response_schema``) | ``answer`` (the generated form) | the form's value |
| unregistered | by the interrupt: ``answer`` with a ``response_schema``, ``approve``/``reject`` for tool |
|  | confirmations and long-running tools, ``approve``/``reject``/``revise`` for free text |

The readers are ``reviewconsole.workflows.answers`` (the workflows read with them too); the doors
apply them through ``inbox.answers.read_answer``, which refuses other shapes (``answer_invalid``).

A kind's decisions are kept to those its interrupt can carry (a tool confirmation takes no
feedback; a form only its answer). ``metadata["actions"]`` (the workflow's own declaration)
replaces the kind's list within that bound, so a workflow may declare more or fewer. Anything
else is refused (:class:`ActionNotSupportedError`, ``400 action_not_supported`` in every door).

A rejection needs a reason unless ``metadata["reject_reason_required"]`` is false (default: the
``REJECT_REASON_REQUIRED`` setting). Bulk approval needs ``metadata["bulk_approve"]`` or the
workflow's ``bulk_approve``. Drafts (request kinds in :data:`DRAFT_KINDS`) may be edited before approval.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine import InterruptKind

from ...workflows import UnknownWorkflowError, get
from ...workflows.answers import Decision, read_review, read_yes_no
from ..conf import inbox_setting
from ..errors import ActionNotSupportedError, AnswerTooLongError
from ..models import Item

__all__ = [
    "ACTIONS",
    "DRAFT_KINDS",
    "MAX_LENGTHS",
    "REQUEST_KINDS",
    "RequestKind",
    "allowed_actions",
    "allows_bulk_approve",
    "can_edit_draft",
    "check_action",
    "check_lengths",
    "register_request_kind",
    "reject_reason_required",
    "request_kind",
]

ACTIONS = ("approve", "reject", "revise", "answer")

DRAFT_KINDS = frozenset({"email_draft", "review_draft"})
"""Request kinds whose draft (``pages/drafts.draft_of``) a reviewer may edit before approving."""

MAX_LENGTHS = {"feedback": 5_000, "reason": 2_000, "draft": 20_000, "answer": 20_000}
"""Most characters of a reviewer's feedback, a rejection's reason and an edited draft, in every door
(inbox, API, AG-UI), counted after ``\r\n`` became ``\n``; ``answer`` bounds all the text of any
other answer (a confirmation, a long-running result, a form's value) together. Longer is 400
``answer_too_long`` and nothing is stored, so the drafting model's prompt never receives more."""


@dataclass(frozen=True)
class RequestKind:
    """A kind of request: the decisions it supports, in the page's order, and how a raw answer
    (``Any`` JSON) reads as one of them (``None``: no answer given; raise
    :class:`~reviewconsole.workflows.answers.AnswerShapeError` for a shape it does not accept)."""

    name: str
    actions: tuple[str, ...]
    read_answer: Callable[[Any], Decision | None] = read_review


REQUEST_KINDS: dict[str, RequestKind] = {}


def register_request_kind(kind: RequestKind) -> RequestKind:
    """Declare (or redeclare) ``kind``; returns it.

    Raises:
        ValueError: an action outside :data:`ACTIONS`, or none.
    """
    unknown = [a for a in kind.actions if a not in ACTIONS]
    if unknown or not kind.actions:
        raise ValueError(f"Request kind {kind.name!r} declares unknown actions {unknown} or none.")
    REQUEST_KINDS[kind.name] = kind
    return kind


for _kind in (
    RequestKind("email_draft", ("approve", "reject", "revise")),
    RequestKind("vip_discount", ("approve", "reject"), read_yes_no),
    RequestKind("refund", ("approve", "reject"), read_yes_no),
    RequestKind("support_case", ("approve", "reject"), read_yes_no),
    RequestKind("incident_triage", ("answer",)),
    RequestKind("review_text", ("approve", "reject", "revise")),
    RequestKind("review_confirm", ("approve", "reject"), read_yes_no),
    RequestKind("review_draft", ("approve", "reject", "revise")),
    RequestKind("review_form", ("answer",)),
):
    register_request_kind(_kind)


def request_kind(item: Item) -> str:
    """The kind of request for the detail view: ``metadata["kind"]``, else the workflow's kind."""
    kind = item.metadata.get("kind") if isinstance(item.metadata, dict) else None
    if kind:
        return str(kind)
    try:
        return get(item.workflow or item.session.workflow).kind
    except UnknownWorkflowError:
        return ""


def _carried(item: Item) -> list[str]:
    """The decisions the interrupt itself can carry, whatever its request kind declares."""
    if item.kind == InterruptKind.INPUT and item.response_schema:
        return ["answer"]
    if item.kind in (InterruptKind.CONFIRMATION, InterruptKind.LONG_RUNNING):
        return ["approve", "reject"]
    return ["approve", "reject", "revise"]


def allowed_actions(item: Item) -> list[str]:
    """The actions ``item`` takes, in the order the page offers them (see the module docstring)."""
    carried = _carried(item)
    declared: Any = item.metadata.get("actions") if isinstance(item.metadata, dict) else None
    if not isinstance(declared, list):
        registered = REQUEST_KINDS.get(request_kind(item))
        declared = list(registered.actions) if registered else carried
    kept = [a for a in carried if a in declared]
    return kept or carried


def check_action(item: Item, action: str) -> None:
    """Raise unless ``item`` takes ``action``.

    Raises:
        ActionNotSupportedError: the request kind does not support it (400 ``action_not_supported``).
    """
    allowed = allowed_actions(item)
    if action not in allowed:
        raise ActionNotSupportedError(action, allowed)


def check_lengths(**texts: str | None) -> None:
    """Refuse a ``feedback``, ``reason`` or ``draft`` over its :data:`MAX_LENGTHS`.

    Raises:
        AnswerTooLongError: 400 ``answer_too_long`` naming the field and its maximum.
    """
    for name, text in texts.items():
        limit = MAX_LENGTHS[name]
        if isinstance(text, str) and len(text.replace("\r\n", "\n")) > limit:
            raise AnswerTooLongError(name, limit)


def reject_reason_required(item: Item) -> bool:
    value = item.metadata.get("reject_reason_required") if isinstance(item.metadata, dict) else None
    return bool(inbox_setting("REJECT_REASON_REQUIRED") if value is None else value)


def allows_bulk_approve(item: Item) -> bool:
    """Whether ``item`` may be approved together with others (it must take ``approve``)."""
    if "approve" not in allowed_actions(item):
        return False
    declared = item.metadata.get("bulk_approve") if isinstance(item.metadata, dict) else None
    if declared is not None:
        return bool(declared)
    try:
        return get(item.workflow).bulk_approve
    except UnknownWorkflowError:
        return False


def can_edit_draft(item: Item) -> bool:
    return request_kind(item) in DRAFT_KINDS and "approve" in allowed_actions(item)
