"""What a reviewer may do with an item, by its kind and what its interrupt declares.

| interrupt | actions |
|---|---|
| input with a ``response_schema`` | ``answer`` (the generated form) |
| input (free text) | ``approve``, ``reject``, ``revise`` (feedback) |
| tool confirmation, long-running tool | ``approve``, ``reject`` |

``metadata["actions"]`` restricts these (e.g. ``["approve", "reject"]`` drops feedback). A
rejection needs a reason unless ``metadata["reject_reason_required"]`` is false (default: the
``REJECT_REASON_REQUIRED`` setting). Bulk approval needs ``metadata["bulk_approve"]`` or the
workflow's ``bulk_approve``. Drafts (request kind ``email_draft``) may be edited before approval.
"""

from __future__ import annotations

from engine import InterruptKind

from ..workflows import UnknownWorkflowError, get
from .conf import inbox_setting
from .models import Interrupt

__all__ = [
    "ACTIONS",
    "allowed_actions",
    "allows_bulk_approve",
    "can_edit_draft",
    "reject_reason_required",
    "request_kind",
]

ACTIONS = ("approve", "reject", "revise", "answer")


def request_kind(item: Interrupt) -> str:
    """The kind of request for the detail view: ``metadata["kind"]``, else the workflow's kind."""
    kind = item.metadata.get("kind") if isinstance(item.metadata, dict) else None
    if kind:
        return str(kind)
    try:
        return get(item.workflow or item.session.workflow).kind
    except UnknownWorkflowError:
        return ""


def allowed_actions(item: Interrupt) -> list[str]:
    """The actions ``item`` takes, in the order the page offers them."""
    if item.kind == InterruptKind.INPUT and item.response_schema:
        base = ["answer"]
    elif item.kind in (InterruptKind.CONFIRMATION, InterruptKind.LONG_RUNNING):
        base = ["approve", "reject"]
    else:
        base = ["approve", "reject", "revise"]
    restrict = item.metadata.get("actions") if isinstance(item.metadata, dict) else None
    if isinstance(restrict, list):
        kept = [a for a in base if a in restrict]
        return kept or base
    return base


def reject_reason_required(item: Interrupt) -> bool:
    value = item.metadata.get("reject_reason_required") if isinstance(item.metadata, dict) else None
    return bool(inbox_setting("REJECT_REASON_REQUIRED") if value is None else value)


def allows_bulk_approve(item: Interrupt) -> bool:
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


def can_edit_draft(item: Interrupt) -> bool:
    return request_kind(item) == "email_draft" and "approve" in allowed_actions(item)
