"""The domain events the ORM store writes to the outbox (``OutboxEvent``), as frozen dataclasses.

Each has a ``KIND`` (the row's ``kind``), is stored by :func:`event_data` (the row's JSON) and
read back by :func:`from_row`. Times are ISO 8601 strings (UTC); ``interrupt_pk`` is the primary key of the
session's ``workflow_sessions.Interrupt`` row. No event carries an exception's text: a failure is
its error ``code`` and ``node_path`` (the text stays in the server log and the session's error).

| kind | when |
|---|---|
| ``interrupt.opened`` | a commit opened an interrupt (a pause, a retry re-asking it) or a restore re-opened one |
| ``interrupt.answered`` | an answer resolved it (first answer wins; ``timeout`` for the expiry's) |
| ``interrupt.cancelled`` | a commit (failure, cancel, moving on) or a restore cancelled it |
| ``session.status_changed`` | a commit ended the session: completed, failed or cancelled |
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = [
    "DomainEvent",
    "InterruptAnswered",
    "InterruptCancelled",
    "InterruptOpened",
    "SessionStatusChanged",
    "from_row",
]


@dataclass(frozen=True, slots=True)
class InterruptOpened:
    """An interrupt to ask; everything the inbox needs to build its item.

    ``record``: the session interrupt's fields (``interrupt_id``, ``local_id``, ``kind``,
    ``function_name``, ``node_path``, ``branch``, ``invocation_id``, ``message``, ``payload``,
    ``response_schema``, ``tool_call``, ``metadata``, ``created_at``). ``reopens``: an interrupt
    with this wire id was asked before in this session (a checkpoint restore or a retry asks it
    again); ``restored``: by a checkpoint restore (the inbox copies the earlier item's queue).

    The outbox row holds no ``record``: it is the ``Interrupt`` row ``interrupt_pk``'s
    (``store_rows.interrupt_asked``; what was asked never changes), read back when a relay takes
    the row (``outbox.py``). A row written with its ``record`` reads as it is.
    """

    KIND: ClassVar[str] = "interrupt.opened"
    session_id: str
    interrupt_pk: int
    workflow: str
    title: str
    record: dict[str, Any]
    reopens: bool = False
    restored: bool = False


@dataclass(frozen=True, slots=True)
class InterruptAnswered:
    """An answer resolved the interrupt: ``decision`` (``approve``, ``reject``, ``revise``,
    ``answer``, ``timeout``…), who (``decided_by`` label, ``decided_by_id`` user id or None),
    ``reason``, ``edit_diff``, the ``response`` the workflow receives, ``decided_at``."""

    KIND: ClassVar[str] = "interrupt.answered"
    session_id: str
    interrupt_pk: int
    interrupt_id: str
    decision: str
    decided_by: str
    decided_by_id: int | None
    reason: str
    edit_diff: str
    response: Any
    decided_at: str
    timeout: bool = False


@dataclass(frozen=True, slots=True)
class InterruptCancelled:
    """Nobody will answer it: ``cause`` is ``session_failed`` (the failure cancelled it; a Retry
    re-asks it), ``superseded`` (the session was cancelled or moved past it) or ``restored`` (a
    checkpoint restore went back before it)."""

    KIND: ClassVar[str] = "interrupt.cancelled"
    session_id: str
    interrupt_pk: int
    interrupt_id: str
    cause: str
    decided_at: str


@dataclass(frozen=True, slots=True)
class SessionStatusChanged:
    """A commit ended the session. ``output`` for ``completed``; ``error_code`` and
    ``error_node_path`` for ``failed`` (never the message)."""

    KIND: ClassVar[str] = "session.status_changed"
    session_id: str
    workflow: str
    status: str
    output: Any = None
    error_code: str | None = None
    error_node_path: str | None = None


DomainEvent = InterruptOpened | InterruptAnswered | InterruptCancelled | SessionStatusChanged

_KINDS: dict[str, type[Any]] = {
    cls.KIND: cls for cls in (InterruptOpened, InterruptAnswered, InterruptCancelled, SessionStatusChanged)
}


def event_data(event: DomainEvent) -> dict[str, Any]:
    """The event as the outbox row's ``data`` (JSON); an opened interrupt's without its ``record``."""
    data = dataclasses.asdict(event)
    if isinstance(event, InterruptOpened):
        del data["record"]
    return data


def from_row(kind: str, data: dict[str, Any]) -> DomainEvent:
    """The event an outbox row holds; an opened interrupt's ``data`` with its ``record`` put back
    (``outbox.row_event`` reads it from the ``Interrupt`` row: read a row with that).

    Raises:
        KeyError: an unknown ``kind``. TypeError: ``data`` does not fit it.
    """
    return _KINDS[kind](**data)  # type: ignore[no-any-return]
