"""The LangGraph adapter end to end: a real StateGraph on a real checkpointer, paused by
``interrupt()``, decided by a manager in the inbox (over HTTP), resumed once with ``Command``.

Each node counts its runs, so the tests see what ran after the resume and how often: LangGraph
reruns the interrupted node from its start on resume (the code before ``interrupt()`` twice, the
code after it once) and the nodes after it once.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from reviewconsole_client import ReviewTimeoutError
from reviewconsole_client.langgraph import AsyncReviewInterrupts, ReviewInterrupts


class Refund(TypedDict, total=False):
    order_id: str
    amount: float
    approval: dict
    sent: bool


def refund_graph(checkpointer, runs: Counter):
    """draft → approve (interrupts for a person) → send when approved; ``runs`` counts each node."""

    def draft(state: Refund) -> Refund:
        runs["draft"] += 1
        return {"amount": round(state["amount"], 2)}

    def approve(state: Refund) -> Refund:
        runs["approve (before interrupt)"] += 1
        answer = interrupt(
            {
                "title": f"Refund ${state['amount']:g} for {state['order_id']}?",
                "message": "The customer says it arrived broken.",
                "payload": {"order_id": state["order_id"], "amount": state["amount"]},
            }
        )
        runs["approve (after interrupt)"] += 1
        return {"approval": answer}

    def send(state: Refund) -> Refund:
        runs["send"] += 1
        return {"sent": state["approval"]["status"] == "approved"}

    builder = StateGraph(Refund)
    builder.add_node("draft", draft)
    builder.add_node("approve", approve)
    builder.add_node("send", send)
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "approve")
    builder.add_edge("approve", "send")
    builder.add_edge("send", END)
    return builder.compile(checkpointer=checkpointer)


def thread() -> dict:
    return {"configurable": {"thread_id": f"refund-{uuid.uuid4().hex[:8]}"}}


def test_an_interrupt_becomes_a_review_and_the_decision_resumes_the_thread_once(client, manager):
    runs: Counter = Counter()
    graph = refund_graph(InMemorySaver(), runs)
    config = thread()
    reviews = ReviewInterrupts(client, queue="finance", due_in_seconds=3600)

    paused = graph.invoke({"order_id": "A-1001", "amount": 250}, config)
    [interrupted] = paused["__interrupt__"]
    [(interrupt_, review)] = reviews.ask(graph, config)
    assert interrupt_.id == interrupted.id
    assert (review.status, review.queue, review.title) == ("pending", "finance", "Refund $250 for A-1001?")
    assert review.payload == {"order_id": "A-1001", "amount": 250}
    assert review.metadata["langgraph"] == {
        "thread_id": config["configurable"]["thread_id"],
        "interrupt_id": interrupted.id,
    }
    assert review.due_at is not None
    assert reviews.ask(graph, config)[0][1].id == review.id  # asked again: the same review, not a second one

    with ThreadPoolExecutor(1) as pool:
        resuming = pool.submit(reviews.resume, graph, config, timeout=120)
        assert manager.decide(review.id, "approve").status_code == 200
        final = resuming.result()

    assert final["sent"] is True
    assert final["approval"]["status"] == "approved" and final["approval"]["by"] == "manager"
    assert final["approval"]["review_id"] == review.id
    assert runs == {"draft": 1, "approve (before interrupt)": 2, "approve (after interrupt)": 1, "send": 1}
    assert graph.get_state(config).interrupts == ()
    assert graph.get_state(config).next == ()


def test_another_process_resumes_from_the_checkpointer_and_a_rejection_sends_nothing(client, manager):
    saver = InMemorySaver()  # stands for a shared checkpointer (sqlite, Postgres)
    config = thread()
    first_runs: Counter = Counter()
    refund_graph(saver, first_runs).invoke({"order_id": "B-7", "amount": 999.999}, config)
    [(_, review)] = ReviewInterrupts(client, queue="finance").ask(refund_graph(saver, Counter()), config)
    assert manager.decide(review.id, "reject", reason="Over the limit").status_code == 200

    later_runs: Counter = Counter()  # a new graph and helper: nothing kept in memory between them
    final = ReviewInterrupts(client, queue="finance").resume(refund_graph(saver, later_runs), config, timeout=60)
    assert final["sent"] is False
    assert (final["approval"]["status"], final["approval"]["reason"]) == ("rejected", "Over the limit")
    assert first_runs == {"draft": 1, "approve (before interrupt)": 1}
    assert later_runs == {"approve (before interrupt)": 1, "approve (after interrupt)": 1, "send": 1}


def test_a_timeout_resumes_nothing(client):
    runs: Counter = Counter()
    graph = refund_graph(InMemorySaver(), runs)
    config = thread()
    graph.invoke({"order_id": "C-3", "amount": 120}, config)
    with pytest.raises(ReviewTimeoutError):
        ReviewInterrupts(client, queue="finance").resume(graph, config, timeout=0.2)
    assert runs["send"] == 0
    assert len(graph.get_state(config).interrupts) == 1  # still waiting, for a later resume


async def test_the_async_twin_runs_the_graph_to_its_end(aclient, manager):
    runs: Counter = Counter()
    graph = refund_graph(InMemorySaver(), runs)
    config = thread()
    reviews = AsyncReviewInterrupts(aclient, queue="finance")
    order = f"D-{uuid.uuid4().hex[:8]}"
    running = asyncio.create_task(reviews.run(graph, {"order_id": order, "amount": 300}, config, timeout=120))
    review_id = await asyncio.to_thread(manager.find, order)  # the manager finds it in the inbox
    assert (await aclient.get(review_id)).title == f"Refund $300 for {order}?"
    assert (await asyncio.to_thread(manager.decide, review_id, "approve")).status_code == 200
    final = await running
    assert final["sent"] is True
    assert runs["send"] == 1 and runs["approve (after interrupt)"] == 1
