"""Comments on an item: hand-off notes between reviewers, and the notes of lifecycle actions.

A reviewer of the item's queue (or an API client scoped to its workflow) adds a comment with
:func:`comment_add`: stored as a :class:`~reviewconsole.inbox.models.Comment` (``kind``
``comment``), audited (``interrupt.comment``) and logged in the queue's change log
(``interrupt.commented``) so open pages hear of it, in one transaction. The lifecycle actions
(``lifecycle.py``) write their note with :func:`comment_write` in their own transaction (kinds
``defer``, ``release``, ``escalate``, ``cancel``). Comments are kept with the item, shown on its
page (escaped: Django's autoescape) and in its session's timeline (``console/timeline.py``), and
never edited. Comments may be added while the item is pending or after it was decided (a note
for the record).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest

from ...json_input import UnstorableValueError, check_storable
from ..errors import AnswerTooLongError, DecisionError
from ..models import Comment, CommentKind, Item
from .recording import item_change_record
from .selectors import queues_for

if TYPE_CHECKING:  # lifecycle imports this module
    from .lifecycle import Actor

__all__ = ["MAX_NOTE", "check_note", "comment_add", "comment_json", "comment_write", "comments_for"]

MAX_NOTE = 4_000
"""Most characters of a comment or of a lifecycle action's note (``\\r\\n`` counted once)."""


def check_note(text: str, *, what: str, field: str = "note") -> str:
    """``text`` with ``\\r\\n`` as ``\\n`` and surrounding blanks removed, for a ``what`` (``defer``,
    ``comment``…) note.

    Raises:
        DecisionError: blank, or holding a NUL character (nothing can store it).
        AnswerTooLongError: longer than :data:`MAX_NOTE` (400 ``answer_too_long``).
    """
    text = (text or "").replace("\r\n", "\n").strip()
    if not text:
        raise DecisionError(f"Write a {field} for the {what}: whoever takes the request next reads it.")
    try:
        check_storable(text)
    except UnstorableValueError:
        raise DecisionError(f"Remove the NUL character from the {field}: it cannot be stored.") from None
    if len(text) > MAX_NOTE:
        raise AnswerTooLongError(field, MAX_NOTE)
    return text


def comment_write(*, interrupt: Item, kind: str, text: str, actor: Actor, whole_session: bool = False) -> Comment:
    """Store a comment of ``kind`` (a :class:`CommentKind`) by ``actor``; ``text`` already checked
    (:func:`check_note`). ``whole_session`` marks a cancel's note as the session's. No audit: the
    caller's action is audited with the note."""
    if whole_session:
        text = f"Cancelled the whole session: {text}"
    return Comment.objects.create(
        item=interrupt, kind=kind, text=text, author=actor.user, author_label=actor.label[:200]
    )


def comment_add(*, interrupt: Item, text: str, actor: Actor, request: HttpRequest | None = None) -> Comment:
    """Add ``actor``'s comment to ``interrupt``; audited and pushed live.

    Raises:
        PermissionDenied: a person who is not a reviewer of the item's queue.
        DecisionError / AnswerTooLongError: a blank, unstorable or too long text (nothing stored).
    """
    if actor.user is not None and not queues_for(actor.user).filter(pk=interrupt.queue_id).exists():
        raise PermissionDenied("You are not a reviewer of this queue.")
    text = check_note(text, what="comment", field="comment")
    with transaction.atomic():
        comment = comment_write(interrupt=interrupt, kind=CommentKind.COMMENT, text=text, actor=actor)
        item_change_record(
            action="interrupt.comment",
            interrupt=interrupt,
            changes=[(interrupt.queue_id, "interrupt.commented")],
            request=request,
            after={"comment": comment.pk},
            detail={"text": text},
            **actor.audit,
        )
    return comment


def comments_for(interrupt: Item) -> QuerySet[Comment]:
    """The item's comments, oldest first, with their authors."""
    return Comment.objects.filter(item=interrupt).select_related("author").order_by("created_at", "id")


def comment_json(comment: Comment) -> dict[str, object]:
    """``{"id", "kind", "text", "author", "created_at"}`` (ISO 8601): one comment in the API and the
    item views' JSON."""
    return {
        "id": comment.pk,
        "kind": comment.kind,
        "text": comment.text,
        "author": comment.author_label,
        "created_at": comment.created_at.isoformat(),
    }
