"""The list page's two shapes (waiting: owner, due countdown, age; decided: decision, decider,
decided-at), "My decisions", one row renderer for the page and its live snapshot, and the
two-pane page's ``?item=`` and frame answer."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.utils import timezone

from reviewconsole.inbox.items.selectors import InboxFilters, inbox_page
from reviewconsole.inbox.models import Item, Queue
from tests.inbox.factories import make_items


@pytest.fixture
def queues(demo):
    return {q.slug: q for q in Queue.objects.all()}


@pytest.fixture
def logged_in(client, manager):
    client.force_login(manager)
    return client


def _headers(html):
    return re.findall(r'<th scope="col"[^>]*>(.*?)</th>', html)


def _decide(rows, user, decision="approve", hours_ago=3):
    Item.objects.filter(pk__in=[r.pk for r in rows]).update(
        status="resolved",
        decision=decision,
        decided_by=user,
        decided_by_label=user.get_username() if user else "policy: small-refunds",
        decided_at=timezone.now() - dt.timedelta(hours=hours_ago),
    )


def test_the_waiting_list_shows_owner_a_due_countdown_and_age(logged_in, queues):
    now = timezone.now()
    make_items(
        queues["support"], 1, title="Later", due_at=now + dt.timedelta(hours=5), start=now - dt.timedelta(hours=1)
    )
    make_items(
        queues["support"], 1, title="Near", due_at=now + dt.timedelta(minutes=10), start=now - dt.timedelta(hours=1)
    )
    make_items(
        queues["sales"], 1, title="Late", due_at=now - dt.timedelta(minutes=3), start=now - dt.timedelta(hours=2)
    )
    html = logged_in.get("/inbox/").content.decode()
    assert _headers(html)[1:] == ["Request", "Workflow", "Queue", "Owner", "Due", "Waiting since"]
    assert re.search(r'class="countdown" data-due-soon-at="[^"]+">due in 4 h 59 min</time>', html)  # not "4 h"
    assert re.search(r'class="countdown sla-soon" data-due-soon-at="[^"]+">due in (9|10) min</time>', html)
    assert re.search(r'class="countdown sla-late" data-due-soon-at="[^"]+">overdue by (2|3) min</time>', html)
    assert re.search(r'data-rel="ago">(59 min|1 h) ago</time>', html)
    assert re.search(r'<time datetime="[^"]+" title="\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"', html)  # absolute on hover


def test_the_decided_list_shows_decision_decider_and_when_not_due(logged_in, manager, queues):
    approved = make_items(queues["support"], 1, title="Refund A-1001", due_at=timezone.now() + dt.timedelta(hours=1))
    rejected = make_items(queues["finance"], 1, title="Refund B-2")
    by_policy = make_items(queues["finance"], 1, title="Refund C-3")
    _decide(approved, manager)
    _decide(rejected, manager, "reject", hours_ago=26)
    _decide(by_policy, None)
    html = logged_in.get("/inbox/?status=resolved").content.decode()
    assert _headers(html) == ["Request", "Workflow", "Queue", "Decision", "Decided by", "Decided"]
    assert "Due" not in _headers(html) and "Waiting since" not in _headers(html)
    assert 'name="ids"' not in html and 'id="bulk-bar"' not in html  # nothing to act on in bulk
    row = re.search(rf'<tr data-id="{approved[0].pk}".*?</tr>', html, re.S).group(0)
    assert '<span class="outcome" data-decision="approve">Approved</span>' in row
    assert '<td class="decider" data-label="Decided by">manager</td>' in row
    assert 'data-rel="ago">3 h ago</time>' in row
    assert "countdown" not in row
    assert "Rejected" in html and "1 d ago" in html and "policy: small-refunds" in html
    assert 'id="view-decided" aria-current="page"' in html


def test_my_decisions_lists_only_what_the_user_decided(logged_in, manager, outsider, queues):
    mine = make_items(queues["finance"], 2, title="Mine")
    theirs = make_items(queues["finance"], 1, title="Theirs")
    waiting = make_items(queues["finance"], 1, title="Waiting")
    _decide(mine, manager)
    _decide(theirs, outsider)
    html = logged_in.get("/inbox/?my_decisions=1").content.decode()
    shown = [int(pk) for pk in re.findall(r'<tr data-id="(\d+)"', html)]
    assert shown == [mine[1].pk, mine[0].pk]  # newest first
    assert 'id="view-my-decisions" aria-current="page"' in html
    assert '<input type="hidden" name="my_decisions" value="1">' in html  # kept by the filter form
    data = logged_in.get("/inbox/items.json?my_decisions=1").json()
    assert [i["id"] for i in data["items"]] == shown
    assert all("Approved" in i["row"] for i in data["items"])
    assert waiting[0].pk not in shown and theirs[0].pk not in shown
    empty = logged_in.get("/inbox/?my_decisions=1&queue=sales").content.decode()
    assert "You have not decided anything here yet under these filters." in empty


def test_the_snapshot_carries_each_row_as_the_page_renders_it(logged_in, queues):
    # Asked 30 min ago, far from a unit's boundary: the page and the JSON, read a moment apart,
    # say the same age (an hour ago flipped "59 min" to "1 h" between the two reads under load).
    start = timezone.now() - dt.timedelta(minutes=30)
    make_items(queues["support"], 2, title='<img src=x onerror="alert(1)">', start=start)
    html = logged_in.get("/inbox/").content.decode()
    data = logged_in.get("/inbox/items.json").json()
    for entry in data["items"]:
        assert entry["row"].startswith(f'<tr data-id="{entry["id"]}"')
        assert entry["row"].strip() in html  # the same HTML, byte for byte
        assert "<img" not in entry["row"] and "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in entry["row"]


def test_the_two_pane_address_names_the_selected_item(logged_in, queues):
    [item] = make_items(queues["support"], 1)
    assert f'data-selected="{item.pk}"' in logged_in.get(f"/inbox/?item={item.pk}").content.decode()
    for junk in ("abc", "-1", "1" * 30, "²"):
        assert "data-selected" not in logged_in.get("/inbox/", {"item": junk}).content.decode()


def test_the_list_answers_its_item_frame_with_only_the_messages(logged_in, start_review):
    _, item = start_review()
    response = logged_in.post(f"/inbox/items/{item.pk}/decide/", {"action": "approve"})
    assert response.status_code == 302
    framed = logged_in.get("/inbox/", headers={"Sec-Fetch-Dest": "iframe"})
    html = framed.content.decode()
    assert next(t.name for t in framed.templates) == "inbox/pane_left.html"
    assert '<ul class="messages" role="status">' in html and "approve" in html
    assert 'id="items"' not in html
    assert 'class="messages"' not in logged_in.get("/inbox/").content.decode()  # shown once, by the frame


def test_a_created_change_carries_its_row_so_a_list_shows_it_at_once(logged_in, start_review):
    from reviewconsole.inbox.models import Queue

    _, item = start_review()
    logged_in.post(f"/inbox/items/{item.pk}/claim/")
    since = ",".join(f"{pk}:0" for pk in Queue.objects.values_list("pk", flat=True))
    changes = logged_in.get("/inbox/changes.json", {"since": since}).json()["changes"]
    created = [c for c in changes if c["event"] == "interrupt.created"]
    claimed = [c for c in changes if c["event"] == "interrupt.claimed"]
    assert created and claimed
    assert created[0]["row"].startswith(f'<tr data-id="{item.pk}"') and 'class="countdown' in created[0]["row"]
    assert "row" not in claimed[0]  # only a new request is drawn from its message


def test_the_decided_list_is_newest_decision_first_not_newest_request(logged_in, manager, queues):
    asked_first, asked_last = make_items(queues["finance"], 2, title="Refund")
    # Asked an hour ago; asked first, decided last; both decided after the last was asked.
    _decide([asked_first], manager, hours_ago=0.1)
    _decide([asked_last], manager, hours_ago=0.3)
    for query in ("status=resolved", "my_decisions=1"):
        shown = [i["id"] for i in logged_in.get(f"/inbox/items.json?{query}").json()["items"]]
        assert shown == [asked_first.pk, asked_last.pk], query
    filters = InboxFilters(status="resolved")
    first = inbox_page(manager, filters, size=1)
    second = inbox_page(manager, filters, after=first.next_cursor, size=1)
    assert [r.pk for r in first.items + second.items] == [asked_first.pk, asked_last.pk]  # the cursor too


def test_an_auditor_without_queues_is_pointed_to_the_admin(client, personas):
    client.force_login(personas.auditor)
    page = client.get("/inbox/").content.decode()
    assert 'id="admin-link"' in page and "ask an admin" not in page
    client.force_login(personas.other_reviewer)  # a reviewer: queues of their own
    assert 'id="admin-link"' not in client.get("/inbox/").content.decode()
