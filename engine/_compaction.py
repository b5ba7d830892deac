"""Compaction of an agent's model context: older turns summarised, pending calls always kept.

ADK summarises old invocations into the session (``apps/compaction.py``) and its users have seen
compaction drop calls still waiting for their results (the long-running call vanishes from the
model's context, or its later result arrives with no call to match). Here compaction happens
when the context is built for a model call; the session's events are never changed.

With ``LlmAgent(compaction=Compaction(keep_recent=n))``, a context longer than ``n`` contents
becomes: one user message ``"Summary of the earlier conversation: …"`` made from the older
contents, then every older content that holds a *pending* call and the newest older response to
it (a long-running tool's latest update), then the ``n`` most recent contents. The recent part
never starts with a function response, and a call answered by a recent response is kept with it,
so no response loses its call. A pending call is one whose id is a pending interrupt of the
session (a long-running tool, ``request_input``, a confirmation, a node tool that waits) or that
has no response in the context yet.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from ._errors import ConfigurationError
from ._events import Content

__all__ = ["Compaction", "summarize_contents"]

SUMMARY_PREFIX = "Summary of the earlier conversation:\n"


def summarize_contents(contents: list[Content], limit: int = 2000) -> str:
    """A deterministic summary: one line per text, call and response, the last ``limit`` characters."""
    lines: list[str] = []
    for content in contents:
        who = "assistant" if content.role == "model" else "user"
        for part in content.parts:
            if part.text:
                lines.append(f"{who}: {part.text.strip()}")
            elif part.function_call is not None:
                call = part.function_call
                lines.append(f"assistant called {call.name}({json.dumps(call.args, ensure_ascii=False)})")
            elif part.function_response is not None:
                response = part.function_response
                lines.append(f"{response.name} returned {json.dumps(response.response, ensure_ascii=False)}")
    text = "\n".join(lines)
    return text if len(text) <= limit else "…" + text[-limit:]


@dataclass
class Compaction:
    """Keep a model context to about ``keep_recent`` contents (see the module docstring).

    Args:
        keep_recent: contents kept verbatim at the end of the context (at least 1).
        summarize: ``(older contents) -> summary text``; default :func:`summarize_contents`.
    """

    keep_recent: int = 20
    summarize: Callable[[list[Content]], str] | None = None

    def __post_init__(self) -> None:
        if self.keep_recent < 1:
            raise ConfigurationError("Compaction.keep_recent must be at least 1.")

    def apply(self, contents: list[Content], pending: set[str]) -> list[Content]:
        """The compacted context; ``pending`` holds the ids of calls waiting for a result."""
        if len(contents) <= self.keep_recent:
            return contents
        answered = {r.id for c in contents for r in c.function_responses() if r.id}
        waiting = set(pending) | {
            call.id for c in contents for call in c.function_calls() if call.id and call.id not in answered
        }
        cut = len(contents) - self.keep_recent
        while cut > 0 and contents[cut].function_responses():
            cut -= 1  # keep a response together with the call before it
        if cut == 0:
            return contents
        older, recent = contents[:cut], contents[cut:]
        # the calls that recent responses answer stay too: a response never loses its call
        needed = waiting | {r.id for c in recent for r in c.function_responses() if r.id}
        keep: set[int] = set()
        latest: dict[str, int] = {}
        for i, content in enumerate(older):
            if any(c.id in needed for c in content.function_calls()):
                keep.add(i)
            for r in content.function_responses():
                if r.id in waiting:
                    latest[r.id] = i  # of a pending call's updates, the newest stands for the rest
        keep.update(latest.values())
        kept = [c for i, c in enumerate(older) if i in keep]
        summarized = [c for i, c in enumerate(older) if i not in keep]
        if not summarized:
            return contents
        summary = (self.summarize or summarize_contents)(summarized)
        return [Content.user_text(SUMMARY_PREFIX + summary), *kept, *recent]
