"""A new message on an AG-UI thread whose session waits on a review: the workflow's ``on_arrival``
(``workflow_sessions/arrivals.py``). ``reject`` and ``queue`` are applied where the thread's input
is stored (``runs._continue_thread``); ``supersede`` here, before the stream joins the progress of
the session it will follow (the new one)."""

from __future__ import annotations

from typing import Any

from ag_ui.core import RunAgentInput

from engine import InterruptRecord, SessionBusyError, SessionClosedError, WorkflowDataError

from ..api.models import ApiClient
from ..workflow_sessions.services import pending_interrupts
from . import services
from .errors import Refusal
from .hops import hop
from .models import AguiThread

__all__ = ["arrives", "supersede", "while_waiting"]


async def arrives(thread: AguiThread, run: RunAgentInput, message: tuple[str, Any] | None, checkpoint_id: Any) -> bool:
    """Whether the request brings a new message (no ``resume``, no rewind) to a thread whose
    session waits on interrupts: the workflow's ``on_arrival`` applies."""
    if message is None or run.resume or checkpoint_id is not None or message[0] == thread.last_message_id:
        return False
    return bool(await pending_interrupts(thread.session_id))


async def supersede(client: ApiClient, thread: AguiThread, message: tuple[str, Any] | None) -> AguiThread:
    """The thread's waiting session cancelled (its items superseded), the message a new session's input."""
    assert message is not None  # arrives() said so
    try:
        return await hop(services.thread_supersede)(
            thread=thread, client=client, data=message[1], message_id=message[0]
        )
    except WorkflowDataError:
        raise Refusal("input_invalid") from None
    except SessionBusyError:
        raise Refusal("session_busy") from None
    except SessionClosedError:  # cancelled meanwhile: nothing runs again
        raise Refusal("session_closed") from None


async def while_waiting(
    client: ApiClient,
    thread: AguiThread,
    message: tuple[str, Any] | None,
    pending: list[InterruptRecord],
    on_arrival: str,
) -> bool:
    """A request with no ``resume`` to a thread waiting on ``pending``: ``queue`` keeps a new
    message as the thread's next (``services.thread_queue``) and returns True; anything else is
    refused (``interrupts_pending``, naming the session and interrupt; a new message's refusal
    audited as ``session.arrival``).

    Raises:
        Refusal: ``interrupts_pending``; ``input_invalid`` (a message to queue that does not fit
            the workflow's input, its fields named; nothing is queued).
    """
    if message is not None and message[0] != thread.last_message_id:
        if on_arrival == "queue":
            try:
                await hop(services.thread_queue)(thread=thread, client=client, data=message[1], message_id=message[0])
            except WorkflowDataError as exc:
                raise Refusal("input_invalid", exc.message) from None
            return True
        await hop(services.arrival_refused)(thread=thread, client=client, pending=pending)
    raise Refusal(
        "interrupts_pending",
        f"The thread's session {thread.session_id} is waiting on interrupt {pending[0].id[:200]}; resume it first.",
    )
