"""Inbox decisions holding what no database column can (NUL characters, non-finite numbers): a 400
with the form back, nothing recorded (PostgreSQL refuses NUL in text and jsonb; ``NaN`` and
``Infinity`` are not JSON anywhere)."""

from __future__ import annotations

import pytest

from reviewconsole.inbox.errors import DecisionError
from reviewconsole.inbox.models import Item
from reviewconsole.inbox.pages.schema_form import parse_form, validate_value
from reviewconsole.workflow_sessions.models import Answer


@pytest.mark.parametrize(
    "data",
    [
        {"action": "revise", "feedback": "short\x00er"},
        {"action": "reject", "reason": "no\x00pe"},
        {"action": "approve", "edit_draft": "1", "draft": "Dear customer\x00"},
    ],
)
def test_a_decision_with_a_nul_character_is_refused(client, manager, start_review, data):
    _, item = start_review()
    client.force_login(manager)
    response = client.post(f"/inbox/items/{item.pk}/decide/", data, headers={"Accept": "application/json"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"
    assert "NUL character" in response.json()["error"]["message"]
    assert (Item.objects.get(pk=item.pk).status, Answer.objects.count()) == ("pending", 0)


def test_a_form_answer_with_a_nul_character_comes_back_with_the_form(client, personas, start_session):
    _, [item] = start_session("incident-triage", {"title": "Checkout down"})
    client.force_login(personas.admin)
    data = {
        "action": "answer",
        "f.severity": '"high"',
        "f.summary": "Cards\x00 fail",
        "f.affected_customers": "3",
        "f.contact.name": "Ann",
    }
    response = client.post(f"/inbox/items/{item.pk}/decide/", data)
    assert response.status_code == 400
    assert response.context["error"].startswith("Remove the NUL character from f.summary")
    assert (Item.objects.get(pk=item.pk).status, Answer.objects.count()) == ("pending", 0)


@pytest.mark.parametrize("raw", ["1e400", "-1e400", "inf", "nan", "Infinity"])
def test_a_number_field_refuses_non_finite_numbers(raw):
    for kind in ("number", "integer"):
        value, errors = parse_form({"type": kind}, {"f": raw})
        assert value is None
        assert errors == [{"path": [], "message": "Enter a whole number." if kind == "integer" else "Enter a number."}]


@pytest.mark.parametrize(("raw", "message"), [("NaN", "Enter valid JSON."), ("1e400", None), ('"a\\u0000"', None)])
def test_a_json_field_refuses_nan_infinity_and_nul(raw, message):
    schema = {"oneOf": [{"type": "string"}, {"type": "number"}]}  # edited as JSON
    with pytest.raises(DecisionError) as caught:
        validate_value(schema, {"f": raw})
    expected = message or "Enter JSON without NUL characters, unpaired surrogates or numbers out of range."
    assert caught.value.errors == [{"path": [], "message": expected}]
