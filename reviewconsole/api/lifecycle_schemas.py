"""Bodies of the review lifecycle's operations (``lifecycle_views.py``) in the OpenAPI document."""

from __future__ import annotations

from ninja import Field, Schema
from pydantic import AwareDatetime

from ..inbox.items.comments import MAX_NOTE
from .schemas import InterruptOut, _In

__all__ = [
    "CommentIn",
    "CommentOut",
    "CommentsOut",
    "DeferIn",
    "EscalateIn",
    "InterruptCancelIn",
    "LifecycleOut",
    "ReleaseIn",
]


class DeferIn(_In):
    """Put the request back in its queue, unclaimed, due again at ``due_at``, with a note."""

    note: str = Field(min_length=1, max_length=MAX_NOTE, examples=["Waiting for the customer's order number."])
    due_at: AwareDatetime = Field(description="The new due time (ISO 8601 with a time zone), in the future.")


class ReleaseIn(_In):
    """Return a claimed request to its queue with a note for whoever takes it next."""

    note: str = Field(min_length=1, max_length=MAX_NOTE)


class EscalateIn(_In):
    """Move the request to another queue the workflow allows (``queue``: a slug; none: the workflow's
    ``escalate_to``, else the first allowed), with a note."""

    note: str = Field(min_length=1, max_length=MAX_NOTE)
    queue: str | None = Field(default=None, min_length=1, max_length=50)


class InterruptCancelIn(_In):
    """Cancel the request: the workflow receives a recorded cancelled answer and routes on it; with
    ``whole_session`` the session is cancelled instead (nothing runs again)."""

    reason: str = Field(min_length=1, max_length=MAX_NOTE)
    whole_session: bool = False


class CommentIn(_In):
    """A note on the request for other reviewers (kept with it, shown on its page and in the timeline)."""

    text: str = Field(min_length=1, max_length=MAX_NOTE)


class CommentOut(Schema):
    id: int
    kind: str = Field(description="comment, defer, release, escalate or cancel")
    text: str
    author: str
    created_at: str


class CommentsOut(Schema):
    comments: list[CommentOut]


class LifecycleOut(Schema):
    interrupt: InterruptOut
    comment: CommentOut | None = None
