"""A decided item's page says who decided it, not who held the claim: once, in its decision section."""

from __future__ import annotations

from reviewconsole.inbox.items.claims import interrupt_claim
from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.inbox.models import Item


def test_a_decided_item_names_who_decided_instead_of_the_owner(client, personas, start_review, on_commit):
    _, item = start_review()
    interrupt_claim(interrupt=item, user=personas.reviewer)
    client.force_login(personas.reviewer)
    assert (
        'id="owner-line">· owner <span id="owner">p-reviewer</span>'
        in client.get(f"/inbox/items/{item.pk}/").content.decode()
    )
    item.refresh_from_db()
    with on_commit():
        interrupt_decide(interrupt=item, user=personas.queue_manager, action="approve")  # a manager, over the claim
    page = client.get(f"/inbox/items/{item.pk}/").content.decode()
    assert '<span id="owner-line"></span>' in page and 'id="owner"' not in page
    assert 'By <span id="decision-by">p-manager</span>, <span id="decision-at">' in page
    assert page.count("p-manager") == 1  # said once


def test_a_superseded_item_names_no_owner(client, manager, start_review):
    _, item = start_review()
    interrupt_claim(interrupt=item, user=manager)
    Item.objects.filter(pk=item.pk).update(status="cancelled")  # the session moved on without it
    client.force_login(manager)
    page = client.get(f"/inbox/items/{item.pk}/").content.decode()
    assert '<span id="owner-line"></span>' in page
