"""The inbox's domain errors. Views map them to one response each (``views_common.refusal``).

- :class:`DecisionError`: the request is incomplete or not allowed for this item (400); nothing
  was stored.
- :class:`InboxConflict` and its kinds: the item is not in a state that allows the action (409);
  the message says why in words a reviewer understands (who holds it, who decided and when, that
  it expired or was superseded). ``details`` carries the same facts for JSON callers.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ActionNotSupportedError",
    "AnswerMissingError",
    "AnswerShapeInvalidError",
    "AnswerTooLongError",
    "CancelledError",
    "ClaimConflictError",
    "DecisionAmbiguousError",
    "DecisionError",
    "DecisionRefusedError",
    "DeferredError",
    "ExpiredError",
    "InboxConflict",
    "MovedError",
    "NotClaimedError",
    "SupersededError",
]


class DecisionError(ValueError):
    """The decision is incomplete (e.g. a rejection without a reason); nothing was stored.

    ``errors`` lists field errors for generated forms: ``[{"path": [...], "message": str}]``.
    """

    code = "invalid"

    def __init__(self, message: str, *, errors: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.errors = errors or []
        self.details: dict[str, Any] = {}


class ActionNotSupportedError(DecisionError):
    """The request's kind does not support that decision (400 ``action_not_supported``).

    ``details["actions"]`` lists the decisions it does support."""

    code = "action_not_supported"

    def __init__(self, action: str, allowed: list[str]) -> None:
        super().__init__(
            f"This request cannot be decided with {action[:40]!r}; it takes {', '.join(allowed)}. Nothing was recorded."
        )
        self.details = {"action": action[:40], "actions": allowed}


class DecisionAmbiguousError(DecisionError):
    """The decision's fields contradict each other (400 ``decision_ambiguous``): feedback with an
    approval or a rejection, or feedback with an edited draft; deciding would drop a part of what
    the reviewer wrote, so nothing was stored.

    ``errors``: one ``{"path": [field, …], "message": str}`` per field in conflict (the page shows
    each next to its field); ``details``: ``decision`` and ``fields`` (the fields' names)."""

    code = "decision_ambiguous"

    def __init__(self, message: str, *, decision: str, conflicts: list[tuple[list[str], str]]) -> None:
        super().__init__(message, errors=[{"path": path, "message": text} for path, text in conflicts])
        self.details = {"decision": decision[:40], "fields": [path[-1] for path, _ in conflicts]}


class AnswerTooLongError(DecisionError):
    """Feedback, a rejection's reason or an edited draft over its maximum (400 ``answer_too_long``).

    ``details``: ``field`` and ``max_length`` (characters)."""

    code = "answer_too_long"

    def __init__(self, field: str, limit: int) -> None:
        super().__init__(f"The {field} is longer than {limit:,} characters; shorten it. Nothing was recorded.")
        self.details = {"field": field, "max_length": limit}


class AnswerShapeInvalidError(DecisionError):
    """The answer has none of the shapes its request accepts (400 ``answer_invalid``); the
    message and ``details["accepted"]`` name them (``reviewconsole.workflows.answers``)."""

    code = "answer_invalid"

    def __init__(self, shapes: str) -> None:
        super().__init__(f"The answer has none of the accepted shapes: {shapes}.")
        self.details = {"accepted": shapes}


class AnswerMissingError(DecisionError):
    """A free-text answer with nothing in it (None, blank): 400 ``answer_missing``; nothing was stored."""

    code = "answer_missing"

    def __init__(self, message: str = "The answer is empty: say approve, reject or what to change.") -> None:
        super().__init__(message)


class DecisionRefusedError(DecisionError):
    """A check of the workflow (``WorkflowSpec.before_decision``) refused the decision (400
    ``decision_refused``): ``message`` is the workflow's; nothing was stored.

    ``details``: ``interrupt_id`` and ``decision``. ``audit`` (not sent) is what the refusal's
    audit entry records: ``target`` (the item) and ``detail``."""

    code = "decision_refused"

    def __init__(self, message: str, *, interrupt_id: str, decision: str, audit: dict[str, Any]) -> None:
        super().__init__(message)
        self.details = {"interrupt_id": interrupt_id, "decision": decision}
        self.audit = audit


class InboxConflict(Exception):
    """The item's state refuses the action (HTTP 409); ``code`` is stable for clients."""

    code = "conflict"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class ClaimConflictError(InboxConflict):
    """Someone else holds the claim (or took it first)."""

    code = "claimed"


class ExpiredError(InboxConflict):
    """The item's due time passed: it expired (and escalated, or the workflow went on)."""

    code = "expired"


class SupersededError(InboxConflict):
    """The session moved on: the interrupt was cancelled or the session ended."""

    code = "superseded"


class CancelledError(InboxConflict):
    """Someone cancelled the request (its API or AG-UI client, or a queue manager: the request or
    its whole session); ``details``: ``cancelled_by``, ``cancelled_at``, ``reason``."""

    code = "cancelled"


class MovedError(InboxConflict):
    """A manager moved the item to another queue after the caller's permission check."""

    code = "moved"


class NotClaimedError(InboxConflict):
    """Nobody holds the item's claim, so there is no claim to return (e.g. released meanwhile)."""

    code = "not_claimed"


class DeferredError(InboxConflict):
    """Someone deferred the item (a new due time and a note) after the caller loaded it."""

    code = "deferred"
