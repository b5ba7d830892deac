"""Comments and lifecycle notes in the session timeline (admin), in time order among the events, escaped."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from reviewconsole.console.timeline import timeline
from reviewconsole.inbox.items.comments import comment_add
from reviewconsole.inbox.items.lifecycle import Actor, interrupt_cancel, interrupt_defer

SESSIONS = "/admin/workflow_sessions/workflowsession/"


def test_comments_and_notes_are_rows_of_the_timeline(client, auditor, personas, start_review, on_commit):
    session, item = start_review()
    comment_add(interrupt=item, text="Hand-off: <script>alert(1)</script>", actor=Actor.person(personas.reviewer))
    interrupt_defer(
        interrupt=item,
        actor=Actor.person(personas.reviewer),
        until=timezone.now() + dt.timedelta(hours=2),
        note="After lunch",
    )
    with on_commit():
        interrupt_cancel(interrupt=item, actor=Actor.person(personas.queue_manager), reason="Withdrawn")

    rows = timeline(session)
    notes = [(r.comment_kind, r.author) for r in rows if r.comment_kind]
    assert notes == [("Comment", "p-reviewer"), ("Deferred", "p-reviewer"), ("Cancelled", "p-manager")]
    kinds = [r.comment_kind or r.author for r in rows]
    asked = max(i for i, r in enumerate(rows) if any(line.startswith("calls adk_request_input") for line in r.what))
    answer = next(i for i, r in enumerate(rows) if r.author == "user" and r.decisions)
    # In time order: the notes after the request's event, the cancel's note right after its answer.
    assert asked < kinds.index("Comment") < kinds.index("Deferred") < answer
    assert kinds.index("Cancelled") == answer + 1
    assert rows[answer].decisions[0].decision == "cancelled"

    client.force_login(auditor)
    page = client.get(f"{SESSIONS}{session.id}/change/").content.decode()
    assert "Hand-off: &lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>alert(1)</script>" not in page
    assert "After lunch" in page and 'class="comment-row"' in page
