"""Our equivalents of the ADK samples behind the conformance traces (from WORKFLOWS.md).

Each ``build_*`` takes the scripted model and returns the root node. The product samples
(email review, VIP discount, refund approval) live in ``reviewconsole.demo`` and are replayed
from there.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from engine import (
    DEFAULT_ROUTE,
    BaseNode,
    Context,
    Event,
    FunctionTool,
    LlmAgent,
    LongRunningFunctionTool,
    Model,
    RequestInput,
    ToolContext,
    Workflow,
    node,
    request_input_tool,
)
from engine._join import JoinNode
from reviewconsole.demo import email_review

# -- request_input_rerun --------------------------------------------------------------------


@node(rerun_on_resume=True)
def human_review(ctx: Context, draft: str):
    answer = ctx.resume_inputs.get("human_review")
    if answer is None:
        yield RequestInput(interrupt_id="human_review", message=email_review.REVIEW_PROMPT.format(draft=draft))
        return
    yield email_review.handle_human_review(answer)


def build_request_input_rerun(model: Model) -> Workflow:
    draft_email = LlmAgent("draft_email", model=model, instruction=email_review.INSTRUCTION, output_key="draft")
    return Workflow(
        "request_input_rerun",
        edges=[
            ("START", email_review.process_input, draft_email, human_review),
            (
                human_review,
                {"revise": draft_email, "approved": email_review.send_email, "rejected": email_review.reject_email},
            ),
        ],
    )


# -- request_input_advanced -----------------------------------------------------------------


class TimeOffRequest(BaseModel):
    days: int
    reason: str


class TimeOffDecision(BaseModel):
    """The structured response we expect back from the human manager."""

    approved: bool = Field(description="Whether the time off is approved.")
    approved_days: int | None = Field(default=None, description="Number of days approved.")


def evaluate_request(request: TimeOffRequest):
    if request.days <= 1:
        return {"approved": True, "approved_days": request.days}
    return RequestInput(
        interrupt_id="manager_approval",
        message="Please review this time off request.",
        payload=request.model_dump(),
        response_schema=TimeOffDecision,
    )


def process_decision(request: TimeOffRequest, node_input: TimeOffDecision):
    if node_input.approved:
        days = node_input.approved_days if node_input.approved_days is not None else request.days
        return Event(message=f"Time Off Approved! {days} out of {request.days} days granted.")
    return Event(message="Time Off Rejected.")


def build_request_input_advanced(model: Model) -> Workflow:
    process_request = LlmAgent(
        "process_request",
        model=model,
        instruction="Extract the number of days and the reason from the request.",
        output_schema=TimeOffRequest,
        output_key="request",
    )
    return Workflow("request_input_advanced", edges=[("START", process_request, evaluate_request, process_decision)])


# -- fan_out_fan_in -------------------------------------------------------------------------


def make_uppercase(node_input: str) -> str:
    return node_input.upper()


def count_characters(node_input: str) -> int:
    return len(node_input)


def reverse_string(node_input: str) -> str:
    return node_input[::-1]


def aggregate(node_input: dict[str, Any]):
    yield Event(
        message=(
            f"Uppercase: {node_input['make_uppercase']}\n\n"
            f"Character Count: {node_input['count_characters']}\n\n"
            f"Reversed: {node_input['reverse_string']}\n\n"
        )
    )


def build_fan_out_fan_in(model: Model) -> Workflow:
    join = JoinNode(name="join_for_results")
    return Workflow(
        "root_agent",
        edges=[("START", (make_uppercase, count_characters, reverse_string), join, aggregate)],
    )


# -- loop ------------------------------------------------------------------------------------


class Feedback(BaseModel):
    grade: str = Field(pattern="^(tech-related|unrelated)$")
    feedback: str


def process_topic(node_input: str):
    return Event(state={"topic": node_input})


def route_headline(feedback: Feedback):
    return Event(route=feedback.grade)


def build_loop(model: Model) -> Workflow:
    generate = LlmAgent(
        "generate_headline", model=model, instruction="Write a headline about {topic}. Feedback: {feedback?}"
    )
    evaluate = LlmAgent(
        "evaluate_headline",
        model=model,
        instruction="Grade the headline.",
        output_schema=Feedback,
        output_key="feedback",
    )
    process_input = node(process_topic, name="process_input")
    return Workflow(
        "root_agent",
        edges=[
            ("START", process_input, generate, evaluate, route_headline),
            (route_headline, {"unrelated": generate}),
        ],
    )


# -- loop_self -------------------------------------------------------------------------------


def validate_input(node_input: str):
    number = int(node_input)
    if not 0 <= number <= 10:
        raise ValueError("Pick a number from 0 to 10.")
    return Event(state={"target_number": number})


def guess_number(target_number: int):
    guess = random.randint(0, 10)
    yield Event(message=f"Guessing {guess}...")
    if guess == target_number:
        yield Event(message="Correct!")
    else:
        yield Event(route="guessed_wrong")


def build_loop_self(model: Model) -> Workflow:
    return Workflow(
        "root_agent",
        edges=[("START", validate_input, guess_number), (guess_number, {"guessed_wrong": guess_number})],
    )


# -- human_in_loop ---------------------------------------------------------------------------


def reimburse(purpose: str, amount: float) -> dict[str, Any]:
    """Reimburse the amount of money to the employee."""
    return {"status": "ok"}


def ask_for_approval(purpose: str, amount: float) -> dict[str, Any]:
    """Ask for approval for the reimbursement."""
    return {"status": "pending", "amount": amount, "ticketId": "reimbursement-ticket-001"}


def build_human_in_loop(model: Model) -> LlmAgent:
    return LlmAgent(
        "reimbursement_agent",
        model=model,
        instruction="Reimburse amounts under $100 directly; ask for approval otherwise.",
        tools=[reimburse, LongRunningFunctionTool(ask_for_approval)],
    )


# -- tool_confirmation -----------------------------------------------------------------------


def transfer_funds(amount: float, recipient: str, tool_context: ToolContext) -> dict[str, str]:
    """Transfers funds to a recipient."""
    if amount >= 100:
        if not tool_context.tool_confirmation:
            tool_context.request_confirmation(hint=f"Confirm transfer of ${amount} to {recipient}.")
            return {"error": "This tool call requires confirmation, please approve or reject."}
        if not tool_context.tool_confirmation.get("confirmed"):
            return {"error": "Transfer rejected by user."}  # (never reached: the engine answers a decline)
    return {"result": f"Successfully transferred ${amount} to {recipient}."}


def close_account(account_id: str) -> dict[str, Any]:
    """Close a bank account."""
    return {"result": f"Account {account_id} closed successfully."}


def build_tool_confirmation(model: Model) -> LlmAgent:
    return LlmAgent(
        "money_transfer_assistant",
        model=model,
        instruction="Help the user transfer money and close accounts.",
        tools=[
            # The sample's tool answers a decline itself; our engine never runs a declined tool and
            # answers with the tool's decline_message (docs/engine.md, "Where the engine differs").
            FunctionTool(transfer_funds, decline_message="Transfer rejected by user."),
            FunctionTool(close_account, require_confirmation=True),
        ],
    )


# -- request_input_tool ----------------------------------------------------------------------


class SupportTicket(BaseModel):
    title: str
    description: str
    priority: str = "MEDIUM"
    category: str


def create_support_ticket(ticket: SupportTicket) -> dict[str, Any]:
    """Create a support ticket."""
    labels = f"[Category: {ticket.category}, Priority: {ticket.priority}]"
    return {
        "status": "success",
        "ticket_id": "INC-98471",
        "message": f"Successfully created ticket '{ticket.title}' {labels}.",
    }


def build_request_input_tool(model: Model) -> LlmAgent:
    return LlmAgent(
        "support_assistant_agent",
        model=model,
        instruction="File support tickets; ask the user for missing details.",
        tools=[create_support_ticket, request_input_tool],
    )


# -- long_running_functions ------------------------------------------------------------------


def export_data(export_type: str) -> dict[str, Any]:
    """Export data in the given format."""
    return {
        "status": "in-progress",
        "progress": "0%",
        "message": f"Exporting {export_type} data. This may take some time.",
    }


def build_long_running_functions(model: Model) -> LlmAgent:
    return LlmAgent(
        "long_running_functions",
        model=model,
        instruction="Export data when asked.",
        tools=[LongRunningFunctionTool(export_data)],
    )


# -- agent_in_workflow -----------------------------------------------------------------------


class Identity(BaseModel):
    name: str
    phone_number: str


def check_identity(node_input: Identity):
    if node_input.name.lower() != "jane doe":
        return Event(message=f"Could not find matching records for {node_input.name}. Let's try again.", route="retry")
    return Event(message=f"Hello {node_input.name}! Let me look up your orders.")


def find_orders() -> list[str]:
    """Find the customer's lab orders."""
    return ["CBC (Complete Blood Count)", "Lipid Panel"]


def build_agent_in_workflow(model: Model) -> Workflow:
    intake = LlmAgent(
        "intake_agent", model=model, mode="task", instruction="Collect name and phone.", output_schema=Identity
    )
    generate = LlmAgent(
        "generate_instruction",
        model=model,
        instruction="List the customer's orders.",
        tools=[FunctionTool(find_orders, require_confirmation=True)],
    )
    return Workflow(
        "task_in_workflow",
        edges=[
            ("START", intake, check_identity),
            (check_identity, {"retry": intake, DEFAULT_ROUTE: generate}),
        ],
    )


# -- node_as_tool ----------------------------------------------------------------------------


class LookupInput(BaseModel):
    user_id: str


def lookup_customer_data(node_input: LookupInput) -> dict[str, Any]:
    return {"user_id": node_input.user_id, "tier": "Verified VIP Member"}


@node(rerun_on_resume=True)
def calculate_discount(tier: str, ctx: Context):
    yield Event(message=f"Checking discount rules for tier '{tier}'...")
    answer = ctx.resume_inputs.get("confirm_vip_discount")
    if "VIP" in tier and answer is None:
        yield RequestInput(interrupt_id="confirm_vip_discount", message=f"Apply VIP discount for tier '{tier}'?")
        return
    if "VIP" in tier:
        text = answer.get("text", "") if isinstance(answer, dict) else str(answer)
        yield "20% off" if text.strip().lower() in ("yes", "y", "true") else "5% off (VIP declined)"
    else:
        yield "5% off"


def build_node_as_tool(model: Model) -> LlmAgent:
    lookup = Workflow("customer_lookup_workflow", edges=[("START", lookup_customer_data)], input_schema=LookupInput)
    return LlmAgent(
        "customer_service_agent",
        model=model,
        instruction="Look up the customer and compute their discount.",
        tools=[lookup, calculate_discount],
    )


BUILDERS: dict[str, Callable[[Model], BaseNode]] = {
    "request_input_rerun": build_request_input_rerun,
    "request_input_advanced": build_request_input_advanced,
    "fan_out_fan_in": build_fan_out_fan_in,
    "loop": build_loop,
    "loop_self": build_loop_self,
    "human_in_loop": build_human_in_loop,
    "tool_confirmation": build_tool_confirmation,
    "request_input_tool": build_request_input_tool,
    "long_running_functions": build_long_running_functions,
    "agent_in_workflow": build_agent_in_workflow,
    "node_as_tool": build_node_as_tool,
}
