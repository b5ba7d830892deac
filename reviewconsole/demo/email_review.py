"""The email review workflow: ADK's ``request_input`` sample, node for node and route for route.

START → process_input → draft_email (LLM) → request_human_review → handle_human_review, then
``revise`` → draft_email, ``approved`` → send_email, ``rejected`` → reject_email, and (ours, not the
sample's) ``cancelled`` → cancel_email when a queue manager cancelled the review. The reviewer
answers with free text: ``approve``, ``reject``, or feedback that the next draft applies.
As in ADK's ``request_input`` sample, the terminal nodes give only a message and no output, so the
session's ``output`` stays null: its ``result`` is the sentence, and ``state["draft"]`` the email
sent (edits included).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from reviewconsole.workflows import Event, LlmAgent, LlmRequest, Model, RequestInput, Workflow
from reviewconsole.workflows.answers import read_review

__all__ = ["KIND", "EmailReviewInput", "build", "offline_draft"]

KIND = "email_draft"
REVIEW_PROMPT = (
    "Please review the following draft email and provide 'approve', 'reject', or feedback to revise."
    "\n\n---\n{draft}\n---"
)
SENT = "Draft approved and sent successfully."
REJECTED = "Draft rejected."
CANCELLED = "Draft cancelled."
INSTRUCTION = """You are a customer support agent. Write a polite, helpful email reply to the customer complaint
below: a subject line, a greeting, an apology, the next steps, and a sign-off.

Customer complaint:
{complaint}

Reviewer feedback on the previous draft (apply it if present):
{feedback?}
"""


class EmailReviewInput(BaseModel):
    """What starts a session: the customer's complaint (surrounding whitespace removed; not empty)."""

    model_config = ConfigDict(str_strip_whitespace=True)

    complaint: str = Field(min_length=1, max_length=20_000, description="The customer's message.")


def process_input(node_input: Any) -> Event:
    """Store the complaint and clear any feedback."""
    complaint = node_input["complaint"] if isinstance(node_input, dict) else str(node_input)
    return Event(state={"complaint": complaint, "feedback": ""})


def request_human_review(draft: str) -> RequestInput:
    """Ask a reviewer to approve, reject or give feedback on the draft."""
    return RequestInput(message=REVIEW_PROMPT.format(draft=draft), metadata={"kind": KIND})


def handle_human_review(node_input: Any) -> Event:
    """Route on the reviewer's answer: approve, reject, or revise with the text as feedback.

    The answer is read with ``reviewconsole.workflows.answers.read_review``, the reading the
    doors use to classify and normalise it: ``"approve"``, ``"reject"``, feedback text,
    ``{"result": "approve", "draft": "<edited>"}`` (the reviewer edited the draft before
    approving: it becomes the state's ``draft``, then ``approved``), and ``{"timeout": true}``
    (nobody answered in time: ``rejected``), and the console's cancelled answer
    (``{"cancelled": true, "reason": …}``: a queue manager cancelled the review: ``cancelled``).

    Raises:
        AnswerShapeError: any other shape (the doors refuse those before they are stored).
    """
    decision = read_review(node_input)
    if decision is not None and decision.cancelled:
        return Event(state={"cancel_reason": decision.reason}, route="cancelled")
    if decision is None or decision.action == "reject":
        return Event(route="rejected")
    if decision.action == "approve":
        return Event(state={"draft": decision.draft}, route="approved") if decision.draft else Event(route="approved")
    return Event(state={"feedback": decision.text}, route="revise")


def send_email() -> Event:
    """Send the approved draft (``state["draft"]``, edits included); the last message is :data:`SENT`."""
    return Event(message=SENT)


def reject_email() -> Event:
    """Drop the rejected draft; the last message is :data:`REJECTED`."""
    return Event(message=REJECTED)


def cancel_email() -> Event:
    """Drop the draft of a cancelled review (the reason is ``state["cancel_reason"]``); the last
    message is :data:`CANCELLED`."""
    return Event(message=CANCELLED)


def build(model: Model | None = None, *, name: str = "email_review") -> Workflow:
    """The workflow; ``model`` drafts the email (None: the runner's default model)."""
    draft_email = LlmAgent("draft_email", model=model, instruction=INSTRUCTION, output_key="draft")
    return Workflow(
        name,
        edges=[
            ("START", process_input, draft_email, request_human_review, handle_human_review),
            (
                handle_human_review,
                {"revise": draft_email, "approved": send_email, "rejected": reject_email, "cancelled": cancel_email},
            ),
        ],
        input_schema=EmailReviewInput,
        description="Review an AI-drafted reply to a customer complaint.",
    )


COMPLAINT_HEADING = "Customer complaint:\n"
FEEDBACK_HEADING = "\n\nReviewer feedback on the previous draft (apply it if present):\n"


def _sections(instruction: str) -> tuple[str, str]:
    """``(complaint, feedback)`` from the drafting instruction (:data:`INSTRUCTION`, filled in).

    The feedback section starts at the *last* copy of its heading: the complaint comes before it
    and is the customer's text, so a complaint quoting the heading cannot pose as reviewer
    feedback (the first copy would be inside the complaint).
    """
    head, found, feedback = instruction.rpartition(FEEDBACK_HEADING)
    if not found:
        head, feedback = instruction, ""
    complaint = head.split(COMPLAINT_HEADING, 1)[1] if COMPLAINT_HEADING in head else ""
    return complaint.strip(), feedback.strip()


def offline_draft(request: LlmRequest) -> str:
    """The offline draft model's reply: deterministic, and it visibly applies the feedback.

    The reply is only the email a customer would receive: the feedback it applied is the
    session state's ``feedback`` (shown beside the draft), never a note inside the text."""
    complaint, feedback = _sections(request.instruction)
    topic = re.sub(r"\s+", " ", complaint)[:80].rstrip(" .!?") or "your message"
    lower = feedback.lower()
    greeting = "Dear Customer," if "formal" in lower else "Hello,"
    apology = "We sincerely apologise" if ("apolog" in lower or "sorry" in lower) else "We are sorry"
    lines = [f"Subject: About your message: {topic}", "", greeting, ""]
    if "short" in lower or "brief" in lower or "concise" in lower:
        lines += [f"{apology} about this. Please reply with your order number and we will fix it quickly."]
    else:
        lines += [
            f'Thank you for telling us about this: "{complaint.strip()}".',
            "",
            f"{apology} for the trouble it has caused. We have opened a case and a specialist will look into it.",
            "",
            "To help us resolve it quickly, please reply with your order number and any details you can share.",
        ]
    if "refund" in lower:
        lines += ["", "If the problem cannot be fixed, we will refund you in full."]
    if "discount" in lower or "voucher" in lower:
        lines += ["", "As a thank-you for your patience, here is a 10% discount on your next order."]
    lines += ["", "Kind regards,", "The Support Team"]
    return "\n".join(lines)
