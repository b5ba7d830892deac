"""Money on a refund's page reads as money: ``$250.00``, not ``250.0``."""

from __future__ import annotations

import pytest

from reviewconsole.inbox.pages.kinds import money


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (250.0, "$250.00"),
        (40, "$40.00"),
        (1234.5, "$1,234.50"),
        ("99.999", "$100.00"),
        (-5, "-$5.00"),
        ("a lot <b>", "a lot <b>"),  # not a number (an LLM's text): as it is, escaped by the page
        (None, ""),
    ],
)
def test_money_has_two_decimals_and_a_dollar_sign(value, shown):
    assert money(value) == shown


def test_the_refund_page_shows_amount_and_limit_as_money(client, personas, start_session):
    _, [item] = start_session("refund-approval", {"order_id": "A-17", "amount": 250, "reason": "Arrived broken"})
    client.force_login(personas.admin)
    page = client.get(f"/inbox/items/{item.pk}/").content.decode()
    assert '<dd id="amount">$250.00 <span class="badge overdue">above the limit</span></dd>' in page
    assert '<dd id="policy-limit">$100.00</dd>' in page
    assert "250.0<" not in page and ">100.0<" not in page
