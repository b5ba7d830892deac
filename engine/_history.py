"""The conversation a chat-mode agent sends to its model, built from the session's events.

Kept: user messages and answers, and this agent's own model turns and tool responses, on the
agent's branch or an enclosing one (events of node tools run on sub-branches and stay out) and
in its isolation scope. Confirmation requests and their answers stay out (the model never made
those calls). Other agents' text is passed as context (``For context: [name] said: …``), their
function calls and responses are not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._events import REQUEST_CONFIRMATION_FUNCTION, Content, Event, Part

if TYPE_CHECKING:
    from ._context import Context

__all__ = ["conversation"]


def _visible(event_branch: str | None, branch: str | None) -> bool:
    if not event_branch:
        return True
    return branch is not None and (branch == event_branch or branch.startswith(event_branch + "."))


def _kept(part: Part) -> bool:
    if part.function_call is not None:
        return part.function_call.name != REQUEST_CONFIRMATION_FUNCTION
    if part.function_response is not None:
        return part.function_response.name != REQUEST_CONFIRMATION_FUNCTION
    return part.text is not None


def _to_content(event: Event, agent_name: str) -> Content | None:
    content = event.content
    if content is None:
        return None
    if event.author in ("user", agent_name):
        parts = [p for p in content.parts if _kept(p)]
        if not parts:
            return None
        role = "user" if event.author == "user" else (content.role or "model")
        return Content(role=role, parts=parts)
    text = content.text
    if not text:
        return None
    return Content.user_text(f"For context: [{event.author}] said: {text}")


async def conversation(ctx: Context, agent_name: str) -> list[Content]:
    """The contents for the next model call of ``agent_name`` running in ``ctx``."""
    # Everything recorded so far is written first, so the store holds it (with nothing in flight).
    await ctx.session.flush()
    events = await ctx.session.store.list_events(ctx.session_id)
    contents: list[Content] = []
    for event in [*events, *ctx.pending]:
        if event.partial or event.error_code:
            continue
        if event.isolation_scope and event.isolation_scope != ctx.isolation_scope:
            continue
        if not _visible(event.branch, ctx.branch):
            continue
        content = _to_content(event, agent_name)
        if content is not None:
            contents.append(content)
    return contents
