"""reviewconsole.testing: run a workflow with a scripted or offline model, answer it, check its route and outcome."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from pydantic import BaseModel

from engine import START, AnswerInvalidError, RequestInput, Workflow, WorkflowDataError
from reviewconsole.testing import WorkflowRun, node_route, run_workflow, scripted
from reviewconsole.workflows import get

COMPLAINT = {"complaint": "My phone battery drains too fast"}
SENT = "Draft approved and sent successfully."  # the email review's end messages
REJECTED = "Draft rejected."


def test_a_spec_runs_on_its_offline_policies_until_it_asks():
    run = run_workflow(get("email-review"), COMPLAINT)
    run.assert_waiting(kind="input", count=1)
    assert "My phone battery drains too fast" in run.interrupt().message
    assert run.route == ["process_input", "draft_email", "request_human_review"]
    assert run.paths[0] == "email_review@1/process_input@1"


def test_answers_run_it_on_and_the_route_and_outcome_are_checked():
    run = run_workflow(get("email-review"), COMPLAINT)
    run.answer("shorter").answer("approve", kind="input")
    run.assert_route(
        "process_input",
        "draft_email",
        "request_human_review",
        "handle_human_review",
        "draft_email",
        "request_human_review",
        "handle_human_review",
        "send_email",
    )
    run.assert_route("draft_email", "draft_email", "send_email", exact=False)
    run.assert_outcome("completed", message=SENT)
    assert run.state["feedback"] == "shorter" and "shorter" not in run.state["draft"]


def test_a_scripted_model_drafts_in_order():
    run = run_workflow(get("email-review"), COMPLAINT, model=["First draft.", "Second draft."])
    assert "First draft." in run.interrupt().message
    run.answer("more formal")
    assert "Second draft." in run.interrupt().message
    assert run.runner.model.calls == 2


def test_a_script_that_runs_out_fails_the_session_with_the_models_message():
    run = run_workflow(get("email-review"), COMPLAINT, model=scripted("Only draft."))
    run.answer("again")
    run.assert_outcome("failed")
    assert "no response left" in str(run.error)


def test_failed_assertions_say_what_happened():
    run = run_workflow(get("email-review"), COMPLAINT)
    with pytest.raises(AssertionError, match=r"route taken: \['process_input', 'draft_email'"):
        run.assert_route("process_input", "send_email")
    with pytest.raises(AssertionError, match="expected status 'completed'; status 'waiting'"):
        run.assert_outcome("completed")
    with pytest.raises(AssertionError, match="status 'waiting'"):
        run.assert_waiting(kind="confirmation")
    with pytest.raises(AssertionError, match="in order"):
        run.assert_route("send_email", "process_input", exact=False)


def test_a_confirmation_is_answered_by_kind():
    run = run_workflow(get("refund-approval"), {"order_id": "A-1001", "amount": 80, "reason": "Arrived broken"})
    run.answer({"status": "approved"}, kind="long_running")  # the console's policy would approve it
    run.assert_waiting(kind="confirmation", count=1)
    run.answer({"confirmed": True}, kind="confirmation")
    run.assert_outcome("completed")


class Approval(BaseModel):
    approved: bool


def ask(node_input: str) -> RequestInput:
    return RequestInput(interrupt_id=f"ask_{node_input}", message=f"Approve {node_input}?", response_schema=Approval)


def ask_a(node_input: str) -> RequestInput:
    return ask("a")


def ask_b(node_input: str) -> RequestInput:
    return ask("b")


def test_a_root_node_runs_too_and_an_answer_goes_to_the_interrupt_named_by_id():
    pair = Workflow("pair", edges=[(START, (ask_a, ask_b))])
    run = run_workflow(pair, "go")
    assert len(run.pending) == 2
    with pytest.raises(LookupError, match="2 pending interrupts"):
        run.interrupt(kind="input")
    run.answer({"approved": True}, id="ask_a")
    assert [r.local_id or r.id for r in run.pending] == ["ask_b"]
    run.answer({"approved": False}, id="ask_b")
    assert run.status == "completed"
    with pytest.raises(LookupError, match="No pending interrupt matches id 'ask_a'; pending: nothing"):
        run.interrupt("ask_a")


def test_an_answer_the_schema_refuses_is_not_stored():
    run = run_workflow(Workflow("one", edges=[(START, ask_a)]), "go")
    with pytest.raises(AnswerInvalidError):
        run.answer({"approved": "perhaps"})
    run.refresh().assert_waiting(count=1)


def test_input_that_does_not_fit_the_schema_is_refused():
    with pytest.raises(WorkflowDataError) as refused:
        run_workflow(get("email-review"), {"complaint": ""})
    assert refused.value.details["errors"][0]["path"] == ["complaint"]


async def test_it_also_works_inside_an_async_test():
    run = run_workflow(get("email-review"), COMPLAINT)
    assert isinstance(run, WorkflowRun)
    run.answer("reject").assert_outcome("completed", message=REJECTED)


def test_node_route_drops_the_root_and_run_counters():
    assert node_route("claim@1/ask@2") == "ask"
    assert node_route("root@1/review@1/ask@3") == "review/ask"
    assert node_route("agent@1") == ""


NO_DJANGO = """
from engine import START, RequestInput, Workflow
from reviewconsole.testing import run_workflow
from reviewconsole.workflows import WorkflowSpec


def ask(node_input):
    return RequestInput(message=f"Approve {node_input}?")


def done(node_input):
    return {"answer": node_input}


def build(model):
    return Workflow("plain", edges=[(START, ask, done)])


spec = WorkflowSpec(name="plain", title="Plain", kind="approval", queue="plain", build=build)
run = run_workflow(spec, "the plan")
run.assert_waiting(kind="input", count=1)
run.answer("approve").assert_outcome("completed", output={"answer": "approve"})
run.assert_route("ask", "done")
import sys
django = sys.modules.get("django.conf")
assert django is None or not django.settings.configured, "Django settings were needed"
"""


def test_the_kit_needs_no_django_settings_nor_database():
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run([sys.executable, "-c", NO_DJANGO], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
