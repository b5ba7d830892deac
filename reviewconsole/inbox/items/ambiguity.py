"""Decisions whose fields contradict each other are refused, never decided with a part dropped.

The item page posts, with the button pressed (``action``), every text it holds: the feedback box
and, for a draft, the draft box (the agent's draft unless the reviewer edited it). Feedback goes
only with ``revise`` (Send feedback); an edited draft only with ``approve`` (approve with edits).
:func:`check_unambiguous` refuses anything else that would lose what the reviewer wrote (400
``decision_ambiguous``, naming the fields): feedback with Approve or Reject, feedback with an
edited draft. A rejection with an edited draft is no conflict: the reviewer rejects, the edit
is moot.

:func:`draft_edit` reads the posted draft: a draft box the reviewer changed is an edit whether or
not the page's old ``edit_draft`` flag came with it (the page always sent the flag with the box,
so it said nothing the box did not; a client that left it out meant its draft too).
"""

from __future__ import annotations

from ..errors import DecisionAmbiguousError, DecisionError
from ..models import Item
from ..pages.drafts import draft_of
from .actions import allowed_actions, can_edit_draft

__all__ = ["check_unambiguous", "draft_edit"]

_BUTTONS = {"approve": "Approve", "reject": "Reject", "answer": "Submit answer"}


def draft_edit(item: Item, draft: str | None, action: str) -> str | None:
    """The posted ``draft`` as the reviewer edited it (``\\r\\n`` as ``\\n``, blank lines around it
    dropped), or None when none was posted or it is the agent's draft.

    Raises:
        DecisionError: an approval with a draft for a request that takes none (not a draft
            kind), or with the draft box emptied (nothing to send).
    """
    if draft is None:
        return None
    candidate = draft.replace("\r\n", "\n").strip("\n")
    if not can_edit_draft(item):
        if action == "approve" and candidate.strip():
            raise DecisionError("This request has no draft to edit: approve it without one. Nothing was recorded.")
        return None
    original = draft_of(item)
    if original is None:  # a draft request whose message lost its draft: nothing to compare with
        return None
    if candidate == original.strip("\n"):
        return None
    if not candidate.strip():
        if action == "approve":
            raise DecisionError(
                "The edited draft is empty: write the text to send, or undo the edit to approve the draft "
                "as it was. Nothing was recorded."
            )
        return None
    return candidate


def check_unambiguous(item: Item, *, action: str, feedback: str, edited: str | None) -> None:
    """Refuse a decision on ``item`` that would drop part of what the reviewer wrote.

    ``feedback``: the feedback box as posted; ``edited``: :func:`draft_edit`'s reading of the draft.

    Raises:
        DecisionAmbiguousError: feedback with any decision but ``revise`` (the conflicting fields:
            ``feedback`` and ``action``), or feedback with an edited draft (``feedback``, ``draft``).
    """
    said = feedback.strip()
    if not said:
        return
    if edited is not None and action in ("approve", "revise"):
        raise DecisionAmbiguousError(
            "Your decision is ambiguous: you edited the draft and wrote feedback. Approve the edited draft "
            "(clear the feedback), or send the feedback for a new draft (undo the edit). Nothing was recorded.",
            decision=action,
            conflicts=[
                (["draft"], "An edited draft is approved as it stands: undo the edit to send feedback instead."),
                (["feedback"], "Feedback asks for a new draft: clear it to approve your edit instead."),
            ],
        )
    if action != "revise":
        button = _BUTTONS.get(action, action[:40])
        other = (
            "or press Send feedback to ask for a new draft"
            if "revise" in allowed_actions(item)
            else "as this request takes no feedback"
        )
        raise DecisionAmbiguousError(
            f"Your decision is ambiguous: you wrote feedback and pressed {button}. Clear the feedback to "
            f"{action[:40]}, {other}. Nothing was recorded.",
            decision=action,
            conflicts=[
                (["feedback"], f"Feedback is only sent with Send feedback: clear it to {action[:40]}."),
                (["action"], f"{button} sends no feedback."),
            ],
        )
