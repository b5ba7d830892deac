"""Our equivalents of the ADK samples behind the conformance traces (from WORKFLOWS.md).

Each ``build_*`` takes the scripted model and returns the root node. The product samples
(email review, VIP discount, refund approval) live in ``reviewconsole.workflows`` and are replayed
from there.
"""

from __future__ import annotations

import base64
import random
import re
from typing import Any, Literal
from urllib.error import HTTPError

from pydantic import BaseModel, Field

from engine import (
    DEFAULT_ROUTE,
    AuthConfig,
    AuthCredential,
    Context,
    Event,
    FunctionTool,
    LlmAgent,
    LongRunningFunctionTool,
    Model,
    Part,
    RequestInput,
    RetryConfig,
    ToolContext,
    Workflow,
    node,
    request_input_tool,
)
from engine._join import JoinNode
from reviewconsole.workflows import email_review

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


# == adk-extra: the samples behind ../shared/conformance/adk-extra ==========================

# -- multi_triggers --------------------------------------------------------------------------


def send_message(node_input: Any):
    yield Event(message=f"Triggered for input: {node_input}")


def build_multi_triggers(model: Model) -> Workflow:
    return Workflow(
        "root_agent",
        edges=[("START", (make_uppercase, count_characters, reverse_string), send_message)],
    )


# -- nested_workflow -------------------------------------------------------------------------


def process_year(node_input: str):
    """Validates the input is a valid 4-digit year."""
    match = re.search(r"\b\d{4}\b", node_input)
    if not match:
        yield Event(message="Please provide a valid 4-digit year (e.g., 1955).")
        raise ValueError("Invalid year format.")
    yield Event(state={"year": match.group(0)})


def aggregate_results(node_input: dict[str, str], year: str):
    """Combines outputs from parallel branches found in context state."""
    yield Event(
        message=(
            f"# Year: {year}\n\n## Famous Person Bio:\n\n{node_input['find_famous_person']}\n\n"
            f"## Historical Event:\n\n{node_input['find_historical_event']}"
        )
    )


def build_nested_workflow(model: Model) -> Workflow:
    find_name = LlmAgent("find_name", model=model, instruction="Name one famous person born in {year}.")
    generate_bio = LlmAgent("generate_bio", model=model, instruction="Write a short biography.")
    find_famous_person = Workflow("find_famous_person", edges=[("START", find_name, generate_bio)])
    find_historical_event = LlmAgent(
        "find_historical_event", model=model, instruction="Describe one historical event of {year}."
    )
    return Workflow(
        "root_agent",
        edges=[
            (
                "START",
                node(process_year, name="process_input"),
                (find_famous_person, find_historical_event),
                JoinNode(name="join_for_aggregation"),
                aggregate_results,
            )
        ],
    )


# -- node_output -----------------------------------------------------------------------------


class TopicDetails(BaseModel):
    title: str = Field(description="The title of the generated topic.")
    description: str = Field(description="A short description of the topic.")
    category: str = Field(description="The broad category of the topic.")


def generate_string_output(node_input: str):
    return f"Processed input: {node_input}"


def generate_event_output(node_input: str):
    return Event(output=f"Event wrapped output: {node_input}")


def consume_pydantic_output(node_input: TopicDetails):
    return (
        "Received Pydantic Model!\n"
        f"Title: {node_input.title}\n"
        f"Description: {node_input.description}\n"
        f"Category: {node_input.category}"
    )


def build_node_output(model: Model) -> Workflow:
    generate = LlmAgent(
        "generate_pydantic_output",
        model=model,
        instruction="Generate a creative topic based on the following input.",
        output_schema=TopicDetails,
    )
    return Workflow(
        "root_agent",
        edges=[("START", generate_string_output, generate_event_output, generate, consume_pydantic_output)],
    )


# -- parallel_functions ----------------------------------------------------------------------

_WEATHER = {
    "New York": {"temp": 72, "condition": "sunny", "humidity": 45},
    "London": {"temp": 60, "condition": "cloudy", "humidity": 80},
    "Tokyo": {"temp": 68, "condition": "rainy", "humidity": 90},
    "San Francisco": {"temp": 65, "condition": "foggy", "humidity": 85},
    "Paris": {"temp": 58, "condition": "overcast", "humidity": 70},
    "Sydney": {"temp": 75, "condition": "sunny", "humidity": 60},
}
_RATES = {("USD", "EUR"): 0.85, ("USD", "GBP"): 0.75, ("USD", "JPY"): 110.0, ("EUR", "USD"): 1.18}


async def get_weather(city: str, tool_context: ToolContext) -> dict[str, Any]:
    """Get the current weather for a city.

    Args:
        city: The name of the city to get weather for.
    """
    result = _WEATHER.get(city, {"temp": 70, "condition": "unknown", "humidity": 50})
    if "weather_requests" not in tool_context.state:
        tool_context.state["weather_requests"] = []
    tool_context.state["weather_requests"].append({"city": city, "result": result})
    return {
        "city": city,
        "temperature": result["temp"],
        "condition": result["condition"],
        "humidity": result["humidity"],
    }


async def get_currency_rate(from_currency: str, to_currency: str, tool_context: ToolContext) -> dict[str, Any]:
    """Get the exchange rate between two currencies.

    Args:
        from_currency: The source currency code (e.g., 'USD').
        to_currency: The target currency code (e.g., 'EUR').
    """
    rate = _RATES.get((from_currency, to_currency), 1.0)
    if "currency_requests" not in tool_context.state:
        tool_context.state["currency_requests"] = []
    tool_context.state["currency_requests"].append({"from": from_currency, "to": to_currency, "rate": rate})
    return {"from_currency": from_currency, "to_currency": to_currency, "exchange_rate": rate}


def build_parallel_functions(model: Model) -> LlmAgent:
    return LlmAgent(
        "parallel_function_test_agent",
        model=model,
        instruction="Call several functions in parallel when asked about several things.",
        tools=[get_weather, get_currency_rate],
    )


# -- message ---------------------------------------------------------------------------------

_RED_SQUARE_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAYAAAAf8/9hAAAAXElEQVR4nO2TSQ7AIAwD"
    "7fz/z+ZQtapwmrJc8QklmjBIgZJgIZMiAIl9KYbhjx4fgwosbNxgMrF0+4uhgHnYDM6"
    "AzQHJeg5HYtyHFfgy2AztN/5tZWfrBtVzkl4DzfQkEPd+cEkAAAAASUVORK5CYII="
)


def send_string(node_input: Any = None):
    yield Event(message="#1 This is a simple string message.")


def send_multimodal(node_input: Any = None):
    yield Event(
        message=[
            Part.from_text("#2 Here is a multi-modal message with an inline image (red circle):"),
            Part.from_bytes(data=_RED_SQUARE_PNG, mime_type="image/png"),
        ]
    )


async def multiple_messages(node_input: Any = None):
    yield Event(message="#3 Multiple messages")
    yield Event(message="Processing step 1...")
    yield Event(message="Processing step 2...")
    yield Event(message="Done processing.")


async def stream_sentence(node_input: Any = None):
    yield Event(message="#4 Starting to stream...")
    sentence = "This is a streaming message sent in chunks.\n\n| Header 1 | Header 2 |\n"
    for i in range(0, len(sentence), 5):
        yield Event(message=sentence[i : i + 5], partial=True)


def build_message(model: Model) -> Workflow:
    return Workflow("message", edges=[("START", send_string, send_multimodal, multiple_messages, stream_sentence)])


# -- retry -----------------------------------------------------------------------------------


@node(retry_config=RetryConfig(max_attempts=5, initial_delay=1))
def get_weather_with_retries(ctx: Context):
    yield Event(message=f"Getting weather... attempt {ctx.attempt_count}")
    if random.random() < 0.7:
        raise HTTPError(url="http://mock-api.example.com", code=500, msg="Internal Server Error", hdrs={}, fp=None)  # type: ignore[arg-type]
    yield "sunny"


def report_weather(node_input: str):
    yield Event(message=f"The weather is {node_input}")


def build_retry(model: Model) -> Workflow:
    get_weather_with_retries.name = "get_weather"
    return Workflow("root_agent", edges=[("START", get_weather_with_retries, report_weather)])


# -- parallel_worker -------------------------------------------------------------------------


class TopicExplanation(BaseModel):
    topic: str
    explanation: str


@node(parallel_worker=True)
def make_upper_case(node_input: str):
    yield node_input.upper()


def aggregate_explanations(node_input: list[TopicExplanation]):
    return Event(message="\n\n---\n\n".join(f"{e.topic}: {e.explanation}" for e in node_input))


def build_parallel_worker(model: Model) -> Workflow:
    find_related_topics = LlmAgent(
        "find_related_topics",
        model=model,
        instruction='Given the specific topic "{topic}", generate a list of 3 related topics.',
        output_schema=list[str],
    )
    explain_topic = LlmAgent(
        "explain_topic",
        model=model,
        instruction='Explain how the following topic relates the the original topic: "{topic}".',
        parallel_worker=True,
        output_schema=TopicExplanation,
    )
    return Workflow(
        "root_agent",
        edges=[
            (
                "START",
                node(process_topic, name="process_input"),
                find_related_topics,
                make_upper_case,
                explain_topic,
                node(aggregate_explanations, name="aggregate"),
            )
        ],
    )


# -- auth_api_key ----------------------------------------------------------------------------

weather_auth = AuthConfig(
    auth_scheme={"type": "apiKey", "in": "header", "name": "X-Api-Key"},
    raw_auth_credential=AuthCredential(auth_type="apiKey", api_key="placeholder"),
    credential_key="weather_api_key",
)


@node(auth_config=weather_auth, rerun_on_resume=True)
def fetch_weather(ctx: Context):
    """Fetches weather data using the authenticated API key."""
    cred = ctx.get_auth_response(weather_auth)
    api_key = cred.api_key if cred else "unknown"
    masked = api_key[:4] + "****" if len(api_key) > 4 else "****"
    return {"city": "San Francisco", "temperature": "18C", "condition": "Sunny", "api_key_used": masked}


def summarize(node_input: dict[str, Any]):
    yield Event(
        message=(
            f"Weather for {node_input['city']}: {node_input['temperature']}, {node_input['condition']}."
            f" (Authenticated with key: {node_input['api_key_used']})"
        )
    )


def build_auth_api_key(model: Model) -> Workflow:
    return Workflow("auth_api_key", edges=[("START", fetch_weather, summarize)])


# -- dynamic_nodes ---------------------------------------------------------------------------


class HeadlineFeedback(BaseModel):
    grade: Literal["tech-related", "unrelated"]
    feedback: str


def build_dynamic_nodes(model: Model) -> Workflow:
    generate_headline = LlmAgent(
        "generate_headline", model=model, instruction='Write a headline about "{topic}". Feedback: {feedback?}'
    )
    evaluate_headline = LlmAgent(
        "evaluate_headline",
        model=model,
        instruction="Grade whether the headline is related to technology.",
        output_schema=HeadlineFeedback,
        output_key="feedback",
    )

    @node(rerun_on_resume=True)
    async def orchestrate(ctx: Context, node_input: str):
        yield Event(state={"topic": node_input})
        while True:
            headline = await ctx.run_node(generate_headline)
            feedback = HeadlineFeedback.model_validate(await ctx.run_node(evaluate_headline, node_input=headline))
            if feedback.grade == "tech-related":
                yield headline
                break

    return Workflow("root_agent", edges=[("START", orchestrate)])


# -- use_as_output ---------------------------------------------------------------------------


def finalize(node_input: str) -> str:
    return f"final: {node_input}"


def build_use_as_output(model: Model) -> Workflow:
    summarizer = LlmAgent("summarizer", model=model, instruction="Summarize the following text in one sentence.")

    @node(rerun_on_resume=True)
    async def orchestrate(ctx: Context, node_input: str) -> str:
        return await ctx.run_node(summarizer, node_input=node_input, use_as_output=True)

    return Workflow("root_agent", edges=[("START", orchestrate, finalize)])


# -- task_sub_agent --------------------------------------------------------------------------


class OrderItem(BaseModel):
    name: str = Field(description="Name of the food item ordered")
    quantity: int = Field(description="Quantity ordered")


class PaymentInfo(BaseModel):
    """Output schema for the payment collection task."""

    credit_card_number: str
    cvv: str


def place_order(orders: list[OrderItem], payment_info: PaymentInfo) -> str:
    """Mock an order placement operation."""
    total_items = sum(item.quantity for item in orders)
    return f"Successfully placed order for {total_items} items."


def confirmation() -> str:
    """Confirm proceeding with the order."""
    return "Proceeding with order."


def build_task_sub_agent(model: Model) -> LlmAgent:
    order_collector = LlmAgent(
        "order_collector",
        model=model,
        mode="task",
        output_schema=list[OrderItem],
        instruction="Collect the user's food order (Pizza, Burger, Salad) and finish your task.",
        description="Collects the food order from the user.",
        tools=[FunctionTool(confirmation, require_confirmation=True)],
    )
    payment_collector = LlmAgent(
        "payment_collector",
        model=model,
        mode="task",
        output_schema=PaymentInfo,
        instruction="Ask the user for their credit card number and CVV, then finish your task.",
        description="Collects credit card and CVV from the user.",
    )
    return LlmAgent(
        "coordinator",
        model=model,
        sub_agents=[order_collector, payment_collector],
        tools=[place_order],
        instruction="You need both order and payment information to place an order.",
    )


BUILDERS = {
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
    "adk-extra/agent_in_workflow": build_agent_in_workflow,
    "adk-extra/long_running_functions": build_long_running_functions,
    "adk-extra/tool_confirmation": build_tool_confirmation,
    "adk-extra/multi_triggers": build_multi_triggers,
    "adk-extra/nested_workflow": build_nested_workflow,
    "adk-extra/node_output": build_node_output,
    "adk-extra/parallel_functions": build_parallel_functions,
    "adk-extra/message": build_message,
    "adk-extra/retry": build_retry,
    "adk-extra/parallel_worker": build_parallel_worker,
    "adk-extra/auth_api_key": build_auth_api_key,
    "adk-extra/dynamic_nodes": build_dynamic_nodes,
    "adk-extra/use_as_output": build_use_as_output,
    "adk-extra/task_sub_agent": build_task_sub_agent,
}
