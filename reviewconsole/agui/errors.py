"""Refusals of an AG-UI run: a stable ``code`` and a generic message, sent as RUN_ERROR.

AG-UI 1.0 (interrupts, rule 3): unknown interrupt ids, uncovered interrupts, invalid payloads and
expired interrupts end the run with RUN_ERROR. Messages never carry exception text, class names
or tracebacks; the details go to the server log.

| code | when |
|---|---|
| ``input_missing`` | a new thread's request has no user message to start the workflow with |
| ``input_invalid`` | the user message does not fit the workflow's input, the input holds a NUL, an unpaired |
|  | surrogate (``"\\ud800"``, also in ``threadId`` or ``runId``: RUN_STARTED echoes them JSON-escaped) or a |
|  | non-finite number, or ``resume`` has two entries for one interrupt id (the message names it) |
| ``interrupts_pending`` | the thread waits on interrupts and the request has no ``resume`` (a new message |
|  | there follows the workflow's ``on_arrival``: this is ``reject``; the message names the session, interrupt); |
|  | with a rewind, refused before it is made unless the workflow queues the message |
| ``interrupt_claimed`` | a ``resolved`` entry answers an interrupt a reviewer has claimed, and the token |
|  | lacks the ``override_claims`` scope (the message names the holder) |
| ``four_eyes_required`` | a ``resolved`` entry approves a request an approval policy leaves to two people |
| ``interrupt_superseded`` | ``resume`` answers an interrupt a newer one of the thread replaced ("superseded: a |
|  | newer request exists", naming its id) and not that newer one, other than with this client's |
|  | own decision sent again (a retried request: left alone, the stream shows the newer one) |
| ``resume_incomplete`` | ``resume`` leaves a pending interrupt of the thread unanswered |
| ``interrupt_unknown`` | ``resume`` names an interrupt this thread never had |
| ``interrupt_decided`` | a ``resolved`` entry answers an interrupt decided already (a reviewer in the inbox, |
|  | another client, a concurrent request) other than by this client's same answer, which is left |
|  | alone, or a ``cancelled`` entry names one; the message names who decided what and when |
| ``interrupt_not_ready`` | ``resume`` names an interrupt not open yet while the session runs or an earlier |
|  | answer waits to be applied: retry the same request in a moment |
| ``answer_invalid`` | a ``resolved`` payload is missing, does not fit the interrupt's schema (the message names |
|  | each field and why: a ``format`` too, e.g. ``contact.email: not an email address``), or has none |
|  | of the shapes its request accepts (``inbox.answers``; the message names them) |
| ``answer_missing`` | a ``resolved`` payload to a free-text interrupt is empty (``{"result": null}``, blank text) |
| ``answer_too_long`` | feedback, a reason or a draft in a ``resolved`` payload is over its maximum |
|  | (``inbox.actions.MAX_LENGTHS``: 5,000, 2,000 and 20,000 characters) |
| ``action_not_supported`` | a ``resolved`` payload stands for a decision the request kind does not support |
|  | (feedback to a VIP confirmation); the message lists those it takes |
| ``decision_ambiguous`` | a ``resolved`` payload says two decisions at once (feedback beside an approval, a |
|  | rejection or an edited draft); the message names the keys in conflict |
| ``decision_refused`` | a check of the workflow (``WorkflowSpec.before_decision``) refused a ``resolved`` |
|  | entry's decision; the message is the workflow's (e.g. a reason is needed above a limit) |
| ``interrupt_expired`` | a ``resolved`` entry answers an interrupt past its ``expiresAt`` |
| ``args_changed`` | a ``resolved`` approval names an ``args_digest`` (``argsDigest``) other than the one its |
|  | interrupt shows in ``metadata.argsDigest``: the call's arguments changed since (``engine._digest``) |
| ``checkpoint_unknown`` | ``forwardedProps.checkpointId`` names no pause of this thread |
| ``checkpoint_decided`` | the rewind would reopen, or go back past, an interrupt decided outside this thread |
|  | (a reviewer in the inbox, an API client, an expiry): that decision is final; the message names the |
|  | interrupt and decider |
| ``session_closed`` | ``forwardedProps.checkpointId`` on a completed, failed or cancelled session, or a new |
|  | message to a cancelled one: none is revived |
| ``session_busy`` | another run held the session longer than the bounded wait, or another request of the |
|  | thread is making the same rewind (or took the session while this one rewound): retry |
| ``version_retired`` | the thread's session runs on a workflow version no longer deployed |
| ``run_failed`` | the workflow failed (a node raised) |
| ``unavailable`` | the console is stopping (SIGTERM): nothing more of the request was stored; retry |
| ``internal_error`` | anything else |
"""

from __future__ import annotations

__all__ = ["MESSAGES", "Refusal", "answer_invalid"]

MESSAGES = {
    "input_missing": "Send a user message to start this workflow.",
    "input_invalid": "The user message does not fit the workflow's input.",
    "interrupts_pending": "The thread is waiting on interrupts; resume them first.",
    "interrupt_claimed": "A reviewer has claimed this interrupt.",
    "four_eyes_required": "This request needs the approvals of two different people in the inbox.",
    "interrupt_superseded": "superseded: a newer request exists.",
    "resume_incomplete": "Answer every pending interrupt of the thread.",
    "interrupt_unknown": "Unknown interrupt.",
    "interrupt_decided": "The interrupt was decided already; nothing was recorded.",
    "interrupt_not_ready": "The interrupt is not open yet: an earlier answer is being applied; retry in a moment.",
    "answer_invalid": "The answer does not fit the interrupt's response schema.",
    "answer_missing": "The answer is empty: a free-text interrupt needs text.",
    "answer_too_long": "The answer is longer than its maximum.",
    "action_not_supported": "The request does not support that decision.",
    "decision_ambiguous": "The answer says two decisions at once: send one.",
    "decision_refused": "A check of the workflow refused this decision.",
    "interrupt_expired": "The interrupt has expired; cancel it instead.",
    "args_changed": (
        "The args_digest given does not match the tool call's arguments (a wrong digest, or arguments changed"
        " since they were shown): review the call again."
    ),
    "checkpoint_unknown": "Unknown checkpoint.",
    "checkpoint_decided": "An interrupt of that checkpoint was decided outside this thread; that decision is final.",
    "session_closed": "The session has ended; it cannot be rewound, and a cancelled one takes no new message.",
    "session_busy": "The session is busy; try again.",
    "version_retired": "This thread's workflow version is no longer deployed.",
    "run_failed": "The workflow run failed.",
    "unavailable": "The console is stopping; retry in a moment.",
    "internal_error": "The run could not be completed.",
}


class Refusal(Exception):
    """End the run with RUN_ERROR ``code`` (a key of :data:`MESSAGES`) and its generic message (or ``message``)."""

    def __init__(self, code: str, message: str | None = None) -> None:
        super().__init__(code)
        self.code = code
        self.message = message or MESSAGES[code]


MAX_FIELD_ERRORS = 5
"""Most field errors an ``answer_invalid`` message lists (then "and N more")."""


def answer_invalid(errors: list[dict[str, object]]) -> Refusal:
    """``answer_invalid`` naming each field the payload got wrong and why, from the engine's
    ``AnswerInvalidError.details["errors"]`` (``[{"path": [...], "message": str}]``): RUN_ERROR has
    no room for a list, so the message holds them (``"…schema: contact.email: not an email
    address, e.g. name@example.com."``), each cut to 200 characters."""
    named = []
    for error in errors[:MAX_FIELD_ERRORS]:
        path = error.get("path")
        where = ".".join(str(p) for p in path) if isinstance(path, list) and path else "the answer"
        named.append(f"{where}: {str(error.get('message', ''))[:200]}")
    more = f"; and {len(errors) - MAX_FIELD_ERRORS} more" if len(errors) > MAX_FIELD_ERRORS else ""
    if not named:
        return Refusal("answer_invalid")
    return Refusal("answer_invalid", f"{MESSAGES['answer_invalid'][:-1]}: {'; '.join(named)}{more}.")
