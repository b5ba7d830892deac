"""Each request kind's title and summary are written for people (issue 17, "Readable everywhere"):
the rows, the item page's heading and the live list's rows say them, escaped."""

from __future__ import annotations

import pytest

from reviewconsole.inbox.models import Item, Queue
from reviewconsole.inbox.pages.formats import humanize, money, number, one_line
from reviewconsole.inbox.pages.headings import HEADINGS, Heading, heading, register_heading
from reviewconsole.inbox.pages.rows import render_row
from tests.inbox.factories import make_items


def _developer_output(text):
    """Marks of a repr or a tool's raw call: quotes around values, ``key=value``, ``name:`` of a tool."""
    return "'" in text or "=" in text or "_" in text


def test_a_refund_names_amount_order_and_reason(start_session):
    _, [item] = start_session("refund-approval", {"order_id": "A-1001", "amount": 250, "reason": "Arrived broken"})
    named = heading(item)
    assert named.title == "Refund $250.00 for order A-1001 — Arrived broken"
    assert named.summary == "Over the $100.00 policy limit: a person must approve it."
    _, [large] = start_session("refund-approval", {"order_id": "A-7", "amount": 12500.5, "reason": "Never came"})
    assert heading(large).title == "Refund $12,500.50 for order A-7 — Never came"
    assert heading(large).summary == "Over $1,000.00: two different people must approve it."


def test_a_refund_the_policy_approved_says_so_in_the_list_and_its_page(client, personas, start_session):
    """Found in a new user's trial: a $40 refund approved by policy read "Over the $100.00 policy limit"."""
    session, _ = start_session("refund-approval", {"order_id": "A-40", "amount": 40, "reason": "Late"})
    decided = Item.objects.get(session=session, function_name="ask_for_approval")
    assert decided.decided_by_label == "policy: small-refunds"
    said = "Within the $100.00 policy limit: approved by policy."
    assert heading(decided) == type(heading(decided))("Refund $40.00 for order A-40 — Late", said)
    client.force_login(personas.other_reviewer)
    page = client.get(f"/inbox/items/{decided.pk}/").content.decode()
    assert f'<p class="summary" id="item-summary">{said}</p>' in page
    assert said in client.get("/inbox/?status=resolved").content.decode()
    decided.decided_by_label, decided.decision = "", ""  # a small refund left to people (a rule replaced)
    assert heading(decided).summary == "Within the $100.00 policy limit, but left to a person: approve or reject it."


def test_a_vip_discount_names_the_customer_not_their_id(start_session):
    _, [item] = start_session("vip-discount", {"customer_id": "c123"})
    named = heading(item)
    assert named.title == "VIP discount 20% for Ada Lovelace"
    assert named.summary == "Tier: Verified VIP Member. Confirm the VIP discount or decline it."
    assert "c123" not in named.title and not _developer_output(named.summary)


def test_an_email_reply_names_its_subject_and_the_complaint(start_session):
    _, [item] = start_session("email-review", {"complaint": "My phone battery drains too fast"})
    named = heading(item)
    assert named.title == "Email reply — About your message: My phone battery drains too fast"
    assert named.summary == "Customer wrote: My phone battery drains too fast"


def test_an_email_reply_names_the_customer_its_request_names(demo):
    sales = Queue.objects.get(slug="sales")
    message = "Please review…\n\n---\nSubject: Your parcel\n\nHello,\n---"
    [item] = make_items(
        sales, 1, workflow="email-review", message=message, title="Late", metadata={"customer": "Grace Hopper"}
    )
    assert heading(item).title == "Email reply to Grace Hopper — Your parcel"


def test_the_triage_form_uses_its_own_question(start_session):
    _, [item] = start_session("incident-triage", {"title": "Checkout down", "details": "502 errors since 14:05"})
    assert heading(item) == Heading("Triage this incident: Checkout down", "502 errors since 14:05")


def test_a_support_case_names_the_refund_and_the_order(start_session):
    _, [item] = start_session("support-handoff", {"message": "My order o-1001 arrived damaged, I want a refund"})
    named = heading(item)
    assert named.title == "Refund $249.00 for order o-1001"
    assert named.summary == (
        "Espresso machine, delivered, damaged · Customer wrote: My order o-1001 arrived damaged, I want a refund"
    )


def test_the_second_refund_step_is_named_as_a_submission(client, personas, start_session, on_commit):
    _, [item] = start_session("refund-approval", {"order_id": "A-1001", "amount": 250, "reason": "Arrived broken"})
    client.force_login(personas.admin)
    with on_commit():
        client.post(f"/inbox/items/{item.pk}/decide/", {"action": "approve", "interrupt_id": item.interrupt_id})
    submit = Item.objects.get(session=item.session, status="pending")
    named = heading(submit)
    assert named.title == "Submit refund $250.00 for order A-1001"  # the call carries no reason
    assert named.summary == "Approved: confirm sending it to the payment system."


def test_a_kind_from_outside_code_gets_a_generic_title_then_its_own(demo):
    sales = Queue.objects.get(slug="sales")
    [asked] = make_items(sales, 1, workflow="nowhere-flow", title="", message="Is  this\nfine?", metadata={"kind": "x"})
    assert heading(asked) == Heading("Nowhere flow", "Is this fine?")
    [call] = make_items(sales, 1, workflow="nowhere-flow", kind="confirmation", metadata={"kind": "x"})
    call_asked = {"name": "ship_parcel", "args": {"parcelId": "P-9", "weight": 2.0}}
    Item.objects.filter(pk=call.pk).update(tool_call=call_asked)
    call.refresh_from_db()
    assert heading(call) == Heading("Approve: Ship parcel", "Parcel id P-9 · Weight 2")
    register_heading("x", lambda item: Heading(f"Parcel {item.pk}", "ours"))
    try:
        assert heading(asked) == Heading(f"Parcel {asked.pk}", "ours")
    finally:
        HEADINGS.pop("x")


def test_a_kind_whose_namer_fails_falls_back_to_the_generic_title(demo):
    sales = Queue.objects.get(slug="sales")
    [item] = make_items(sales, 1, workflow="vip-discount", title="Someone", message="Go?")
    Item.objects.filter(pk=item.pk).update(payload={"customer_id": ["not", "text"], "proposed_discount": {}})
    item.refresh_from_db()
    assert heading(item).title  # never an error page for a payload of an unexpected shape


def test_outside_text_in_a_title_is_escaped_in_the_row(demo):
    sales = Queue.objects.get(slug="sales")
    [item] = make_items(sales, 1, workflow="vip-discount", title="x", message="m")
    Item.objects.filter(pk=item.pk).update(payload={"customer_id": "<script>x</script>", "proposed_discount": "20%"})
    item = Item.objects.select_related("queue").get(pk=item.pk)
    html = render_row(item, decided=False)
    assert "VIP discount 20% for customer &lt;script&gt;x&lt;/script&gt;" in html and "<script>" not in html


def test_the_item_page_is_headed_by_the_title_and_summary(client, personas, start_session):
    _, [item] = start_session("vip-discount", {"customer_id": "c123"})
    client.force_login(personas.admin)
    page = client.get(f"/inbox/items/{item.pk}/").content.decode()
    assert '<h1 id="item-title">VIP discount 20% for Ada Lovelace</h1>' in page
    assert '<p class="summary" id="item-summary">Tier: Verified VIP Member.' in page
    assert "<title>VIP discount 20% for Ada Lovelace · " in page
    listed = client.get("/inbox/").content.decode()
    assert ">VIP discount 20% for Ada Lovelace</a>" in listed and "Verified VIP Member&#x27;" not in listed


@pytest.mark.parametrize(
    ("value", "shown"),
    [(250.0, "$250.00"), (1234.5, "$1,234.50"), ("99.999", "$100.00"), (-5, "-$5.00"), ("lots", "lots"), (None, "")],
)
def test_money_in_us_english(value, shown):
    assert money(value) == shown


def test_money_and_numbers_in_another_known_locale_and_unknown_ones_in_us_english():
    assert money(1234.5, locale="de-DE") == "1.234,50\u00a0$"
    assert money(1234.5, "EUR", locale="fr-FR") == "1\u202f234,50\u00a0€"
    assert money(1234.5, locale="xx-XX") == "$1,234.50"
    assert number(12500.0, locale="de-DE") == "12.500"


@pytest.mark.parametrize(
    ("value", "shown"),
    [(249.0, "249"), (12500, "12,500"), (0.25, "0.25"), (-3.5, "-3.5"), (True, "yes"), ("20%", "20%"), (None, "")],
)
def test_numbers_without_needless_decimals(value, shown):
    assert number(value) == shown


def test_machine_names_read_as_words_and_text_on_one_line():
    assert humanize("submit_refund") == "Submit refund"
    assert humanize("orderId") == "Order id"
    assert one_line("a\n  b\tc") == "a b c"
    assert one_line("x" * 10, limit=5) == "xxxx…"


def test_the_rows_line_is_the_pages_summary_word_for_word(client, personas, demo):
    """Found in issue 17: the row cut the summary to 140 characters and ``items.json``'s snippet
    was another formatter's line (the message's first 300 characters, a tool's ``key=value``)."""
    from reviewconsole.inbox.pages.headings import SUMMARY_LENGTH

    support = Queue.objects.get(slug="support")
    message = "First line of a long question\n\n" + "word " * 80
    [item] = make_items(support, 1, workflow="outside-tool", title="Outside question", message=message)
    line = heading(item).summary
    assert "\n" not in line and 140 < len(line) <= SUMMARY_LENGTH and line.endswith("…")
    client.force_login(personas.reviewer)
    assert f'<div class="muted snippet">{line}</div>' in client.get("/inbox/").content.decode()
    [entry] = [e for e in client.get("/inbox/items.json").json()["items"] if e["id"] == item.pk]
    assert entry["snippet"] == line and f'<div class="muted snippet">{line}</div>' in entry["row"]
    page = client.get(f"/inbox/items/{item.pk}/").content.decode()
    assert f'<p class="summary" id="item-summary">{line}</p>' in page


def test_a_tool_calls_summary_is_one_line_too(demo):
    support = Queue.objects.get(slug="support")
    [item] = make_items(support, 1, workflow="outside-tool", kind="confirmation", title="A call")
    Item.objects.filter(pk=item.pk).update(tool_call={"name": "send_note", "args": {"note": "one\ntwo\n\nthree"}})
    item.refresh_from_db()
    assert heading(item) == Heading("Approve: Send note", "Note one two three")
