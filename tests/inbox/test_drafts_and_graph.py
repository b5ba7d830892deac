"""Drafts and their diffs; the workflow picture from the engine's graph."""

from __future__ import annotations

from reviewconsole.inbox.models import Item
from reviewconsole.inbox.pages.drafts import diff_lines, draft_of, edit_diff, parse_unified
from reviewconsole.inbox.pictures.graph import node_names, picture_for_session


def test_a_line_diff_marks_kept_removed_and_added_lines():
    lines = diff_lines("a\nb\nc", "a\nB\nc\nd")
    assert [(line.op, line.text) for line in lines] == [(" ", "a"), ("-", "b"), ("+", "B"), (" ", "c"), ("+", "d")]
    assert [line.css for line in lines] == ["same", "del", "add", "same", "add"]


def test_the_stored_diff_reads_back_without_its_headers():
    stored = edit_diff("Hello,\nThanks", "Dear Ann,\nThanks")
    assert stored.startswith("--- agent draft\n+++ approved draft\n@@")
    assert [(line.op, line.text) for line in parse_unified(stored)] == [
        ("-", "Hello,"),
        ("+", "Dear Ann,"),
        (" ", "Thanks"),
    ]


def test_the_draft_of_an_email_item_comes_from_its_prompt():
    item = Item(workflow="email-review", metadata={"kind": "email_draft"}, message="Review:\n\n---\nHi\n---\nBye\n---")
    assert draft_of(item) == "Hi\n---\nBye"
    assert draft_of(Item(workflow="vip-discount", metadata={}, message="a\n---\nb\n---")) is None


def test_node_names_drop_the_run_suffixes():
    assert node_names("email_review@1/draft_email@12") == ["email_review", "draft_email"]
    assert node_names("agent@1/calculate_discount@adk-1f2e") == ["agent", "calculate_discount"]


def test_a_workflow_picture_has_every_node_edge_route_and_loop():
    picture = picture_for_session(
        "email-review",
        [
            "email_review@1/process_input@1",
            "email_review@1/draft_email@1",
            "email_review@1/request_human_review@1",
            "email_review@1/handle_human_review@1",
            "email_review@1/draft_email@2",
            "email_review@1/request_human_review@2",
        ],
        [("email_review@1/request_human_review@2", "adk_request_input")],
    )
    text = picture.mermaid
    assert text.startswith("flowchart TD")
    for name in ("process_input", "draft_email", "request_human_review", "handle_human_review", "send_email"):
        assert f'"{name}"' in text
    assert 'n4 -->|"revise"| n2' in text  # the loop back to the draft
    assert 'n4 -->|"approved"| n5' in text and 'n4 -->|"rejected"| n6' in text
    assert "class n3 waiting" in text
    assert "class n1,n2,n4 taken" in text
    assert "linkStyle 4 stroke:#1e7d3b" in text  # handle_human_review → draft_email was walked
    assert picture.waiting == ["request_human_review"]


def test_an_agent_picture_has_the_agent_and_its_tools():
    picture = picture_for_session(
        "vip-discount",
        ["customer_service_agent@1", "customer_service_agent@1/customer_lookup_workflow@adk-1"],
        [("customer_service_agent@1/calculate_discount@adk-2", "adk_request_input")],
    )
    assert '(["customer_service_agent (agent)"])' in picture.mermaid
    assert '-.->|"tool"| n2["customer_lookup_workflow (workflow)"]' in picture.mermaid
    assert "class n3 waiting" in picture.mermaid
    assert picture_for_session("retired-workflow", [], []) is None
