"""The list: filters, overdue first, keyset pages that neither skip nor repeat, counts, bulk."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.http import QueryDict
from django.utils import timezone

from reviewconsole.inbox.items.claims import interrupt_claim
from reviewconsole.inbox.items.selectors import InboxFilters, inbox_page, neighbours
from reviewconsole.inbox.models import Item, Queue
from reviewconsole.inbox.pages.headings import heading
from tests.inbox.factories import make_items


@pytest.fixture
def queues(demo):
    return {q.slug: q for q in Queue.objects.all()}


def _walk_all(user, filters, size):
    seen, cursor = [], None
    while True:
        page = inbox_page(user, filters, after=cursor, size=size)
        seen += [i.pk for i in page.items]
        if page.next_cursor is None:
            return seen
        cursor = page.next_cursor


def test_pages_merge_queues_oldest_first_and_never_skip_or_repeat(manager, queues):
    support = make_items(queues["support"], 23)
    sales = make_items(queues["sales"], 17, start=timezone.now() - dt.timedelta(minutes=59, seconds=30))
    walked = _walk_all(manager, InboxFilters(), size=5)
    expected = [
        r.pk
        for r in sorted(Item.objects.filter(pk__in=[i.pk for i in support + sales]), key=lambda r: (r.created_at, r.pk))
    ]
    assert walked == expected


def test_overdue_items_come_first_by_due_time(manager, queues):
    now = timezone.now()
    plain = make_items(queues["support"], 3)
    late = make_items(queues["sales"], 1, due_at=now - dt.timedelta(minutes=5))
    later = make_items(queues["support"], 1, due_at=now - dt.timedelta(minutes=10))
    future = make_items(queues["support"], 1, due_at=now + dt.timedelta(hours=1), start=now - dt.timedelta(hours=2))
    page = inbox_page(manager, InboxFilters(), size=50)
    assert [i.pk for i in page.items][:2] == [later[0].pk, late[0].pk]
    assert [i.pk for i in page.items][2:] == [future[0].pk] + [p.pk for p in plain]
    assert page.overdue_counts == {queues["support"].pk: 1, queues["sales"].pk: 1}
    assert _walk_all(manager, InboxFilters(), size=2) == [i.pk for i in page.items]
    only = inbox_page(manager, InboxFilters(overdue=True), size=50)
    assert [i.pk for i in only.items] == [later[0].pk, late[0].pk]


def test_filters_by_queue_workflow_kind_text_and_claims(manager, outsider, queues):
    make_items(queues["support"], 3)
    vip = make_items(queues["sales"], 2, workflow="vip-discount", kind="input", payload={"tier": "Gold VIP"})
    refund = make_items(queues["finance"], 1, workflow="refund-approval", kind="confirmation")
    ids = lambda **f: {i.pk for i in inbox_page(manager, InboxFilters(**f), size=50).items}  # noqa: E731
    assert ids(queue="sales") == {v.pk for v in vip}
    assert ids(workflow="refund-approval") == {refund[0].pk}
    assert ids(kind="confirmation") == {refund[0].pk}
    assert ids(q="gold vip") == {v.pk for v in vip}
    interrupt_claim(interrupt=vip[0], user=manager)
    assert ids(mine=True) == {vip[0].pk}
    assert vip[0].pk not in ids(unclaimed=True)
    assert {i.pk for i in inbox_page(outsider, InboxFilters(), size=50).items} == {refund[0].pk}
    assert {i.pk for i in inbox_page(outsider, InboxFilters(queue="sales"), size=50).items} == set()


def test_counts_per_queue(manager, queues):
    make_items(queues["support"], 4)
    make_items(queues["finance"], 2)
    page = inbox_page(manager, InboxFilters(), size=1)
    assert (page.counts[queues["support"].pk], page.counts[queues["finance"].pk]) == (4, 2)


def test_decided_items_newest_first(manager, queues):
    rows = make_items(queues["support"], 3)
    Item.objects.filter(pk__in=[r.pk for r in rows]).update(status="resolved", decision="approve")
    page = inbox_page(manager, InboxFilters(status="resolved"), size=50)
    assert [i.pk for i in page.items] == [r.pk for r in reversed(rows)]


@pytest.mark.parametrize(
    "cursor",
    [
        "d|0001-01-01T00:00:00+23:59|1",  # before year 1 in UTC: OverflowError, was a 400 page
        "d|9999-12-31T23:59:59-12:00|1",  # after year 9999 in UTC
        f"d|2026-01-01T00:00:00+00:00|{2**64}",  # a pk no column holds
        "d|2026-01-01T00:00:00|-1",
    ],
)
def test_a_forged_decided_cursor_reads_as_the_first_page(client, manager, queues, cursor):
    rows = make_items(queues["support"], 2)
    Item.objects.filter(pk__in=[r.pk for r in rows]).update(status="resolved", decision="approve")
    client.force_login(manager)
    response = client.get(
        "/inbox/items.json", {"status": "resolved", "after": cursor}, headers={"Accept": "application/json"}
    )
    assert response.status_code == 200, response.content[:300]
    assert sorted(i["item_id"] for i in response.json()["items"]) == sorted(r.pk for r in rows)


def test_filters_read_leniently_and_write_back(demo):
    filters = InboxFilters.from_query(QueryDict("status=bogus&mine=1&q=  two   words &queue=support&x=1"))
    assert filters == InboxFilters(status="pending", mine=True, q="two words", queue="support")
    assert filters.to_query() == "queue=support&mine=1&q=two+words"
    assert filters.to_query(queue="") == "mine=1&q=two+words"


def test_neighbours_follow_the_list_order(manager, queues):
    rows = make_items(queues["support"], 3)
    assert neighbours(manager, rows[1]) == (rows[0].pk, rows[2].pk)
    assert neighbours(manager, rows[0]) == (None, rows[1].pk)


def test_the_list_page_renders_filters_counts_and_the_next_page(client, manager, queues, settings):
    settings.REVIEWCONSOLE = {**settings.REVIEWCONSOLE, "PAGE_SIZE": 2}
    make_items(queues["support"], 3, title="<b>bold</b> title")
    client.force_login(manager)
    response = client.get("/inbox/", {"queue": "support"})
    page = response.content.decode()
    assert len(response.context["items"]) == 2
    assert 'id="next-page"' in page and "&lt;b&gt;bold&lt;/b&gt; title" in page
    assert f'data-count-for="{queues["support"].pk}" aria-label="3 waiting">3<' in page
    second = client.get(
        response.context["page"].next_cursor and "/inbox/",
        {"queue": "support", "after": response.context["page"].next_cursor},
    )
    assert len(second.context["items"]) == 1
    snapshot = client.get("/inbox/items.json", {"queue": "support"}).json()
    assert (len(snapshot["items"]), snapshot["counts"][str(queues["support"].pk)]) == (2, 3)


@pytest.mark.parametrize("ids", [["\u00b2"], ["1", "x"], ["\u0661"]])  # ², a digit int() reads but not ASCII
def test_bulk_with_ids_that_are_not_numbers_does_nothing_and_says_why(client, manager, start_review, ids):
    _, email = start_review()
    client.force_login(manager)
    data = {"action": "claim", "ids": [*ids, email.pk], "query": "queue=support"}
    response = client.post("/inbox/bulk/", data, headers={"Accept": "application/json"})
    assert (response.status_code, response.json()) == (
        400,
        {"error": {"code": "invalid_request", "message": "Item ids are whole numbers; nothing was done."}},
    )
    response = client.post("/inbox/bulk/", data)
    assert (response.status_code, response["Location"]) == (302, "/inbox/?queue=support")
    notes = [(m.level_tag, str(m)) for m in client.get(response["Location"]).context["messages"]]
    assert notes == [("error", "Item ids are whole numbers; nothing was done.")]
    assert not Item.objects.filter(claimed_by__isnull=False).exists()


def test_bulk_without_items_or_action_is_a_json_400_for_json_callers(client, manager, start_review):
    _, email = start_review()
    client.force_login(manager)
    for data in ({"action": "claim"}, {"action": "shred", "ids": [email.pk]}):
        response = client.post("/inbox/bulk/", data, headers={"Accept": "application/json"})
        assert (response.status_code, response.json()["error"]["code"]) == (400, "invalid_request")
    assert not Item.objects.filter(claimed_by__isnull=False).exists()


def test_bulk_claim_release_and_approve_only_where_allowed(client, manager, start_review, start_session, on_commit):
    _, email = start_review()
    _, [vip] = start_session("vip-discount", {"customer_id": "c123"})
    client.force_login(manager)
    response = client.post("/inbox/bulk/", {"action": "claim", "ids": [email.pk, vip.pk], "query": "queue=sales"})
    assert (response.status_code, response["Location"]) == (302, "/inbox/?queue=sales")
    assert set(Item.objects.filter(claimed_by=manager).values_list("pk", flat=True)) == {email.pk, vip.pk}
    client.post("/inbox/bulk/", {"action": "unclaim", "ids": [email.pk, vip.pk]})
    assert not Item.objects.filter(claimed_by__isnull=False).exists()
    with on_commit():
        response = client.post("/inbox/bulk/", {"action": "approve", "ids": [email.pk, vip.pk]}, follow=True)
    notes = [str(m) for m in response.context["messages"]]
    assert f"Approved 1 item: “{heading(vip).title}”." in notes  # says which one
    named = heading(email).title  # named as the list names it
    assert any(f"“{named}”: approve it on its own page" in n for n in notes)
    assert not any(f"#{email.pk}" in n for n in notes)
    assert (Item.objects.get(pk=vip.pk).decision, Item.objects.get(pk=email.pk).status) == (
        "approve",
        "pending",
    )


def test_bulk_refusals_name_items_as_the_list_does(client, personas, start_review, start_session):
    _, first = start_review("Charger <b>missing</b>")
    _, second = start_review("App keeps logging me out")
    _, [elsewhere] = start_session("refund-approval", {"order_id": "A-1", "amount": 40, "reason": "late"})
    client.force_login(personas.reviewer)  # support only: the refund (finance) is not theirs
    ids = [first.pk, second.pk, elsewhere.pk]
    response = client.post("/inbox/bulk/", {"action": "approve", "ids": ids}, follow=True)
    [warning] = [str(m) for m in response.context["messages"] if m.level_tag == "warning"]
    assert warning == (
        "Not done: “Email reply — About your message: Charger <b>missing</b>”: approve it on its own page "
        "(its request does not allow bulk approval); "
        "“Email reply — About your message: App keeps logging me out”: approve it on its own page "
        "(its request does not allow bulk approval); "
        "1 selected request: not found in your queues"
    )
    page = response.content.decode()
    assert "Charger &lt;b&gt;missing&lt;/b&gt;”" in page and "<b>missing</b>" not in page
    assert "#" + str(first.pk) not in warning


def test_a_rows_checkbox_says_whether_bulk_approval_takes_it(client, manager, start_review, start_session):
    _, email = start_review()
    _, [vip] = start_session("vip-discount", {"customer_id": "c123"})
    client.force_login(manager)
    html = client.get("/inbox/").content.decode()
    boxes = dict(re.findall(r'<input type="checkbox" name="ids" value="(\d+)"( data-bulk-approve)?', html))
    assert boxes == {str(email.pk): "", str(vip.pk): " data-bulk-approve"}


def test_bulk_counts_an_id_given_twice_once_and_answers_json_callers(client, manager, start_session, on_commit):
    """Found by an attack: ``ids=84&ids=84&ids=84`` said "Approved 3 items" for one decision, and a
    JSON caller got a redirect to the list instead of a result."""
    _, [vip] = start_session("vip-discount", {"customer_id": "c123"})
    client.force_login(manager)
    with on_commit():
        response = client.post("/inbox/bulk/", {"action": "approve", "ids": [vip.pk] * 3}, follow=True)
    assert [str(m) for m in response.context["messages"]] == [f"Approved 1 item: “{heading(vip).title}”."]
    _, [other] = start_session("vip-discount", {"customer_id": "c123"})
    with on_commit():
        answered = client.post(
            "/inbox/bulk/",
            {"action": "approve", "ids": [other.pk, other.pk, vip.pk]},
            headers={"accept": "application/json"},
        )
    assert answered.status_code == 200
    assert answered.json() == {"done": [other.pk, vip.pk], "refused": []}  # vip's: the same decision again
