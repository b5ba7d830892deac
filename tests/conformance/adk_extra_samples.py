"""Our equivalents of the ADK samples behind ``../shared/conformance/adk-extra`` (its README says
where each sample's ``agent.py`` is), written from their semantics and signatures.

Each ``build_*`` takes the scripted model and returns the root node; ``EXTRA_BUILDERS`` maps a
trace folder (``adk-extra/<sample>``) to its builder. Samples also in ``adk/`` reuse those builders.
"""

from __future__ import annotations

import base64
import random
import re
from collections.abc import Callable
from typing import Any, Literal
from urllib.error import HTTPError

from pydantic import BaseModel, Field

from engine import (
    AuthConfig,
    AuthCredential,
    BaseNode,
    Context,
    Event,
    FunctionTool,
    LlmAgent,
    Model,
    Part,
    RetryConfig,
    ToolContext,
    Workflow,
    node,
)
from engine._join import JoinNode
from tests.conformance.adk_samples import (
    build_agent_in_workflow,
    build_long_running_functions,
    build_tool_confirmation,
    count_characters,
    make_uppercase,
    process_topic,
    reverse_string,
)

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


EXTRA_BUILDERS: dict[str, Callable[[Model], BaseNode]] = {
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
