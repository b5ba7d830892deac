"""The policies' admin (``policies/admin.py``): a rule is validated when saved, with an error naming
the rule and the field; a valid one is stored and applies."""

from __future__ import annotations

from reviewconsole.policies.models import PolicyRule

FORM = {
    "workflow": "refund-approval",
    "name": "big-ones",
    "tool": "ask_for_approval",
    "when": "true",
    "decide": "",
    "reason": "",
    "four_eyes_over": "",
    "queue": "",
    "enabled": "on",
    "position": "0",
}


def test_a_bad_condition_is_refused_naming_the_rule(personas, client):
    client.force_login(personas.admin)
    response = client.post("/admin/policies/policyrule/add/", {**FORM, "four_eyes_over": "args.amount >"})
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert list(errors) == ["four_eyes_over"]
    assert errors["four_eyes_over"][0].startswith("Approval policy 'big-ones', four_eyes_over: The condition")
    assert not PolicyRule.objects.exists()
    response = client.post("/admin/policies/policyrule/add/", {**FORM, "when": "amount > 1"})
    assert "it may use only args" in response.context["adminform"].form.errors["when"][0]


def test_a_good_rule_is_saved_for_a_registered_workflow(personas, client):
    client.force_login(personas.admin)
    response = client.post("/admin/policies/policyrule/add/", {**FORM, "four_eyes_over": "double(args.amount) > 10.0"})
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert PolicyRule.objects.get().four_eyes_over == "double(args.amount) > 10.0"
    response = client.post("/admin/policies/policyrule/add/", {**FORM, "name": "x", "workflow": "nope"})
    assert "workflow" in response.context["adminform"].form.errors
