"""The VIP discount sample (node_as_tool): a VIP tier asks a person; the lookup never repeats."""

import pytest

from reviewconsole.demo import vip_discount


@pytest.fixture
def count_lookups(monkeypatch):
    calls = []
    original = vip_discount.CUSTOMERS.get

    class Counting(dict):
        def get(self, key, default=None):
            calls.append(key)
            return original(key, default)

    monkeypatch.setattr(vip_discount, "CUSTOMERS", Counting(vip_discount.CUSTOMERS))
    return calls


async def test_a_vip_discount_waits_for_a_person_with_customer_tier_and_discount(runner_for, count_lookups):
    runner = runner_for("vip-discount")
    session = await runner.create_session()
    result = await runner.run(session.id, {"customer_id": "c123"})
    (interrupt,) = result.interrupts
    assert (interrupt.id, interrupt.kind) == ("confirm_vip_discount", "input")
    assert interrupt.payload == {"customer_id": "c123", "tier": "Verified VIP Member", "proposed_discount": "20%"}
    assert interrupt.branch.startswith("calculate_discount@")
    assert count_lookups == ["c123"]


@pytest.mark.parametrize(("answer", "discount"), [("approve", "20% off"), ("reject", "5% off (VIP declined)")])
async def test_the_answer_decides_the_discount_and_nothing_before_it_runs_again(
    runner_for, count_lookups, answer, discount
):
    runner = runner_for("vip-discount")
    session = await runner.create_session()
    await runner.run(session.id, {"customer_id": "c123"})
    done = await runner.resume(session.id, {"confirm_vip_discount": {"result": answer}})
    assert done.status == "completed"
    assert done.output == f"Ada Lovelace (Verified VIP Member) gets {discount}."
    assert count_lookups == ["c123"], "the lookup workflow ran before the pause and never again"


async def test_a_standard_customer_needs_nobody(runner_for):
    runner = runner_for("vip-discount")
    session = await runner.create_session()
    done = await runner.run(session.id, {"customer_id": "c456"})
    assert (done.status, done.interrupts) == ("completed", [])
    assert done.output == "Grace Hopper (Standard) gets 5% off."
