"""After a decision the reviewer reads what happened, per request kind and action (issue 17), and
a refused decision's page says who closed the request once, not twice."""

from __future__ import annotations

import pytest

from reviewconsole.inbox.models import Item, Queue
from reviewconsole.inbox.pages.confirmations import confirmation
from reviewconsole.inbox.pages.headings import heading
from tests import call_binding
from tests.inbox.factories import make_items

refunds = call_binding.refunds


def _notes(response):
    return [str(m) for m in response.context["messages"]]


@pytest.mark.parametrize(
    ("action", "fields", "said"),
    [
        ("revise", {"feedback": "shorter"}, "Feedback sent: a new draft is being written."),
        ("reject", {"reason": "off topic"}, "Reply rejected: nothing is sent to the customer."),
    ],
)
def test_an_email_reply_is_confirmed_per_action(client, manager, start_session, on_commit, action, fields, said):
    _, [item] = start_session("email-review", {"complaint": "Parcel lost"})
    client.force_login(manager)
    with on_commit():
        response = client.post(f"/inbox/items/{item.pk}/decide/", {"action": action, **fields}, follow=True)
    if action == "revise":  # the page that waits for the next draft says it, as its heading
        assert response.redirect_chain[-1][0] == f"/inbox/items/{item.pk}/after-feedback/"
        assert f'<h1 id="after-feedback-title">{said.rstrip(".")}</h1>' in response.content.decode()
    else:
        assert said in _notes(response)
    assert not any(n.startswith("Decision recorded") for n in _notes(response))


def test_an_approved_reply_says_it_is_sent_and_an_edited_one_says_whose(start_session):
    # The page's approval is confirmed in a browser (tests/browser/test_readable.py): here the test
    # client's captured commit hooks leave the item pending until the request ends.
    _, [item] = start_session("email-review", {"complaint": "Parcel lost"})
    assert confirmation(item, "approve") == "Reply approved: it is sent to the customer."
    edited = confirmation(item, "approve", draft="Subject: Hi\n\nShorter.")
    assert edited == "Edited reply approved: your version is sent to the customer."
    # The page posts its draft box with every approval: the draft as asked is no edit.
    assert confirmation(item, "approve", draft=item.message.split("\n---\n")[1].rsplit("\n---", 1)[0] + "\n") == (
        "Reply approved: it is sent to the customer."
    )


def test_a_vip_discount_is_approved_or_declined_by_name(client, personas, start_session, on_commit):
    client.force_login(personas.admin)
    _, [item] = start_session("vip-discount", {"customer_id": "c123"})
    with on_commit():
        declined = client.post(f"/inbox/items/{item.pk}/decide/", {"action": "reject", "reason": "no"}, follow=True)
    assert "VIP discount declined: 20% for Ada Lovelace." in _notes(declined)
    assert confirmation(item, "approve") == "VIP discount approved: 20% for Ada Lovelace."


def test_a_refund_is_approved_then_submitted(client, personas, start_session, on_commit):
    _, [item] = start_session("refund-approval", {"order_id": "A-1001", "amount": 250, "reason": "Arrived broken"})
    said = "Refund approved: $250.00 for order A-1001 — Arrived broken. It goes on to be submitted."
    assert confirmation(item, "approve") == said
    client.force_login(personas.admin)
    with on_commit():
        client.post(f"/inbox/items/{item.pk}/decide/", {"action": "approve"})
    submit = Item.objects.get(session=item.session, status="pending")
    assert confirmation(submit, "approve") == "Refund submitted: $250.00 for order A-1001."
    assert confirmation(submit, "reject") == "Refund declined: $250.00 for order A-1001. It is not submitted."


@pytest.mark.django_db(transaction=True)  # commits for real: the item is resolved when the page confirms
def test_an_edited_refund_is_confirmed_with_the_arguments_that_ran(client, personas, start_session, refunds):
    """Found in a new user's trial: a refund lowered to $20 was confirmed as "$40.00 submitted"."""
    session, [submit] = start_session("refund-approval", {"order_id": "A-1001", "amount": 40, "reason": "late"})
    client.force_login(personas.admin)
    fields = {
        "action": "approve",
        "interrupt_id": submit.interrupt_id,
        "args_digest": submit.metadata["args_digest"],
        "edit_args": "1",
        "args": '{"order_id": "A-1001", "amount": 20}',
    }
    response = client.post(f"/inbox/items/{submit.pk}/decide/", fields, follow=True)
    assert refunds == [{"order_id": "A-1001", "amount": 20}]
    assert "Refund submitted: $20.00 for order A-1001." in _notes(response)
    submit.refresh_from_db()
    assert heading(submit).title == "Submit refund $20.00 for order A-1001"  # the decided list says what ran
    # beside the request's own $40.00 (its details): the summary says it was edited
    assert heading(submit).summary == "The amount was edited from $40.00 to $20.00 before it was submitted."
    session.refresh_from_db()
    assert session.output == "Your refund of $20.00 for order A-1001 has been submitted."


def test_a_triage_answer_and_other_kinds(demo):
    sales = Queue.objects.get(slug="sales")
    [triage] = make_items(sales, 1, workflow="incident-triage", metadata={"kind": "incident_triage"}, message="Triage?")
    assert confirmation(triage, "answer") == "Triage sent: the workflow goes on with it."
    [other] = make_items(sales, 1, workflow="nowhere", title="Ship <b>it</b>", metadata={"kind": "elsewhere"})
    assert confirmation(other, "approve") == "Approved: Ship <b>it</b>."  # the messages framework escapes it
    assert confirmation(other, "answer") == "Answer sent: Ship <b>it</b>."
    assert confirmation(other, "revise") == "Feedback sent: Ship <b>it</b>."
    [asked] = make_items(sales, 1, workflow="nowhere", title="Refund $250?", metadata={"kind": "elsewhere"})
    assert confirmation(asked, "reject") == "Rejected: Refund $250?"  # was "… $250?."


def test_a_refused_decision_names_who_decided_once(client, personas, start_session, on_commit):
    _, [item] = start_session("vip-discount", {"customer_id": "c123"})
    client.force_login(personas.admin)
    with on_commit():
        client.post(f"/inbox/items/{item.pk}/decide/", {"action": "approve"})
    response = client.post(f"/inbox/items/{item.pk}/decide/", {"action": "reject", "reason": "late"})
    assert response.status_code == 409
    page = response.content.decode()
    assert response.context["conflict"].startswith("This request was already approved by p-admin at ")
    assert page.count("approved by p-admin at") == 1, "the conflict and the status banner said it twice"
    assert "You hold this request" not in page and 'id="unclaim"' not in page
