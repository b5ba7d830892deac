"""``bulk_approve`` in ``items.json`` and live messages is the workflow's setting unless the
interrupt says otherwise (issue 13): VIP discounts allow it, email drafts do not."""

from __future__ import annotations

from reviewconsole.inbox.items.serializers import list_entry
from reviewconsole.inbox.models import Queue
from tests.inbox.factories import make_items


def test_items_json_reflects_the_workflows_bulk_approve(client, personas, start_session):
    _, [vip] = start_session("vip-discount", {"customer_id": "c123"})
    _, [email] = start_session("email-review", {"complaint": "Late parcel"})
    client.force_login(personas.admin)
    rows = {row["id"]: row for row in client.get("/inbox/items.json?status=pending").json()["items"]}
    assert rows[vip.pk]["bulk_approve"] is True
    assert rows[email.pk]["bulk_approve"] is False


def test_an_interrupts_own_declaration_wins_in_live_messages(demo):
    sales = Queue.objects.get(slug="sales")
    [declined] = make_items(sales, 1, workflow="vip-discount", metadata={"bulk_approve": False})
    [allowed] = make_items(sales, 1, workflow="email-review", metadata={"bulk_approve": True})
    assert list_entry(declined)["bulk_approve"] is False
    assert list_entry(allowed)["bulk_approve"] is True
