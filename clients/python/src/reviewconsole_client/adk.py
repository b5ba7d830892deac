"""Google ADK (google-adk 2.13+) adapter: a long-running tool answered by a person in the inbox.

ADK's human-in-the-loop pattern (its ``human_in_loop`` sample): a ``LongRunningFunctionTool``
returns ``{"status": "pending", …}`` and the run pauses on that call; later the application sends
the ``FunctionResponse`` with the call's ``id`` and ``name`` as a new message and the ``Runner``
goes on. :class:`ReviewTool` is such a tool that files a review; :func:`resume` (or
:func:`wait_and_resume`) sends the decided review's :func:`~reviewconsole_client.outcome` back as
that ``FunctionResponse``. The review's ``metadata["adk"]`` holds what :func:`resume` needs (app,
user, session, call id and name), so a webhook receiver in another process can resume too.

Install with the ``adk`` extra: ``pip install reviewconsole-client[adk]``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from google.adk.events.event import Event
from google.adk.runners import Runner
from google.adk.tools.long_running_tool import LongRunningFunctionTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from .aio import AsyncClient
from .reviews import Review, outcome

__all__ = ["AdkCall", "ReviewTool", "function_response", "pending_reviews", "resume", "wait_and_resume"]

_ASK_FIELDS = frozenset(
    {"title", "message", "queue", "payload", "response_schema", "kind", "due_in_seconds", "on_expiry", "metadata"}
)


@dataclass(frozen=True)
class AdkCall:
    """The paused ADK call a review answers: where it waits and the call's ``id`` and ``name``."""

    app_name: str
    user_id: str
    session_id: str
    function_call_id: str
    function_name: str

    @classmethod
    def of(cls, review: Review) -> AdkCall:
        """The call recorded in ``review.metadata["adk"]``; ``ValueError`` for a review no ReviewTool filed."""
        data = review.metadata.get("adk")
        if not isinstance(data, dict):
            raise ValueError(f"review {review.id} was not filed by a ReviewTool (no metadata['adk'])")
        return cls(**{name: str(data[name]) for name in cls.__dataclass_fields__})


class ReviewTool(LongRunningFunctionTool):
    """A long-running tool whose call becomes a review in ``queue`` and returns "pending".

    ``func`` declares the tool as for any ADK function tool (its name, docstring and typed
    parameters are what the model sees) and runs first: it returns the review's fields as a
    ``dict`` (any of ``title``, ``message``, ``payload``, ``response_schema``, ``kind``,
    ``due_in_seconds``, ``on_expiry``, ``metadata``, ``queue``) or ``None`` for the defaults
    (title: the call, message: the docstring, payload: the arguments). The tool's response to the
    model is ``{"status": "pending", "review_id": …}``; the final one comes from
    :func:`resume`. The review is filed with an idempotency key made of the session and call
    ids, so a retried tool call files it once.
    """

    def __init__(self, func: Callable[..., Any], *, client: AsyncClient, queue: str, **defaults: Any) -> None:
        super().__init__(func)
        unknown = set(defaults) - _ASK_FIELDS
        if unknown:
            raise TypeError(f"ReviewTool got unknown review fields: {sorted(unknown)}")
        self.client = client
        self.defaults = {"queue": queue, **defaults}
        self._doc = inspect.getdoc(func) or ""

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        fields = await super().run_async(args=args, tool_context=tool_context)
        if isinstance(fields, dict) and set(fields) == {"error"}:
            return fields  # ADK's own refusal (missing or mistyped arguments): the model may retry
        if fields is not None and not isinstance(fields, dict):
            raise TypeError(f"{self.name} must return a dict of review fields or None, not {type(fields).__name__}")
        call = AdkCall(
            app_name=tool_context.session.app_name,
            user_id=tool_context.user_id,
            session_id=tool_context.session.id,
            function_call_id=tool_context.function_call_id or "",
            function_name=self.name,
        )
        request = {
            "title": f"{self.name}({', '.join(f'{k}={v!r}' for k, v in args.items())})",
            "message": self._doc or f"The agent calls {self.name}.",
            "payload": args,
            **self.defaults,
            **(fields or {}),
        }
        unknown = set(request) - _ASK_FIELDS
        if unknown:
            raise TypeError(f"{self.name} returned unknown review fields: {sorted(unknown)}")
        request["metadata"] = {**(request.get("metadata") or {}), "adk": call.__dict__}
        key = f"adk:{call.app_name}:{call.user_id}:{call.session_id}:{call.function_call_id}"
        review = await self.client.ask(**request, idempotency_key=key[:200])
        return {"status": "pending", "review_id": review.id}


def pending_reviews(events: Iterable[Event]) -> list[str]:
    """The review ids a run's ``events`` left pending: the ReviewTools' "pending" responses, in order."""
    ids: list[str] = []
    for event in events:
        for response in event.get_function_responses():
            body = response.response or {}
            if body.get("status") == "pending" and isinstance(body.get("review_id"), str):
                ids.append(body["review_id"])
    return ids


def function_response(review: Review) -> types.Content:
    """The user message that answers the paused call: a ``FunctionResponse`` with the call's ``id``
    and ``name`` whose ``response`` is :func:`~reviewconsole_client.outcome` of ``review``."""
    call = AdkCall.of(review)
    part = types.Part(
        function_response=types.FunctionResponse(
            id=call.function_call_id, name=call.function_name, response=outcome(review)
        )
    )
    return types.Content(role="user", parts=[part])


async def resume(runner: Runner, review: Review) -> list[Event]:
    """Send the decided ``review`` to the session its call waits in; the events of the run that follows.

    Raises ``ValueError`` when the review is still pending or was filed under another app than
    ``runner``'s.
    """
    if not review.done:
        raise ValueError(f"review {review.id} is still pending")
    call = AdkCall.of(review)
    if call.app_name != runner.app_name:
        raise ValueError(f"review {review.id} belongs to the ADK app {call.app_name!r}, not {runner.app_name!r}")
    return [
        event
        async for event in runner.run_async(
            user_id=call.user_id, session_id=call.session_id, new_message=function_response(review)
        )
    ]


async def wait_and_resume(runner: Runner, client: AsyncClient, review_id: str, *, timeout: float) -> list[Event]:
    """:meth:`AsyncClient.wait` for the review, then :func:`resume`; raises ``ReviewTimeoutError``."""
    return await resume(runner, await client.wait(review_id, timeout=timeout))
