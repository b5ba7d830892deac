"""The policies' admin (``policies/admin.py``): a rule is validated when saved, with an error naming
the rule and the field (and the name it reads that its tool does not declare); a valid one is
stored and applies; the workflows' own rules are listed, and replacing one is an explicit,
audited choice."""

from __future__ import annotations

import re

from reviewconsole.audit.models import AuditEntry
from reviewconsole.policies.models import PolicyRule
from reviewconsole.policies.rules import rules_for

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


def test_a_misspelt_argument_is_refused_when_saved_naming_the_rule_and_the_name(personas, client):
    client.force_login(personas.admin)
    response = client.post("/admin/policies/policyrule/add/", {**FORM, "when": "double(args.amont) > 5.0"})
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["when"] == [
        "Approval policy 'big-ones', when: The condition 'double(args.amont) > 5.0' reads what is not declared: "
        "args.amont (the parameters of ask_for_approval: amount, order_id, reason). Check the spelling: an "
        "undeclared name is never there, so the rule would never apply."
    ]
    response = client.post("/admin/policies/policyrule/add/", {**FORM, "tool": "ask_for_aproval"})
    assert response.context["adminform"].form.errors["tool"] == [
        "Approval policy 'big-ones': tool 'ask_for_aproval' is not a tool of workflow 'refund-approval' "
        "(its tools: ask_for_approval, submit_refund; or '*' for every tool)."
    ]
    assert not PolicyRule.objects.exists()


def test_a_condition_on_state_the_workflow_does_not_declare_is_saved_with_a_warning(personas, client):
    client.force_login(personas.admin)
    response = client.post("/admin/policies/policyrule/add/", {**FORM, "when": 'state.tier == "vip"'}, follow=True)
    assert PolicyRule.objects.get().when == 'state.tier == "vip"'
    shown = [str(m) for m in response.context["messages"]]
    assert any("declares no state_schema, so the state names of rule big-ones could not be checked" in m for m in shown)


def test_the_workflows_own_rules_are_listed_read_only(personas, client):
    client.force_login(personas.admin)
    page = client.get("/admin/policies/policyrule/").content.decode()
    rows = re.findall(r'<tr class="workflow-rule" data-workflow="([^"]+)" data-name="([^"]+)">', page)
    assert rows == [("refund-approval", "small-refunds"), ("refund-approval", "refund-approval")]
    assert "double(args.amount) &lt;= 100.0" in page
    client.force_login(personas.auditor)  # view permission only: the same list
    assert 'data-name="small-refunds"' in client.get("/admin/policies/policyrule/").content.decode()


def test_replacing_a_workflows_rule_is_an_explicit_audited_choice(personas, client):
    client.force_login(personas.admin)
    replacing = {**FORM, "name": "small-refunds", "when": "double(args.amount) <= 50.0", "decide": "approve"}
    response = client.post("/admin/policies/policyrule/add/", replacing)
    assert response.context["adminform"].form.errors["name"] == [
        "Workflow 'refund-approval' declares a rule named 'small-refunds' in its code (listed on the rules' page). "
        'Tick "Replaces workflow rule" to replace it, or choose another name.'
    ]
    response = client.post("/admin/policies/policyrule/add/", {**FORM, "replaces_workflow_rule": "on"})
    assert response.context["adminform"].form.errors["replaces_workflow_rule"] == [
        "The workflow declares no rule named 'big-ones': nothing to replace."
    ]
    assert not PolicyRule.objects.exists()

    response = client.post("/admin/policies/policyrule/add/", {**replacing, "replaces_workflow_rule": "on"})
    assert response.status_code == 302
    row = PolicyRule.objects.get(name="small-refunds")
    entry = AuditEntry.objects.get(action="policy.rule_replace")
    assert (entry.actor, entry.target_id) == ("user:" + personas.admin.get_username(), str(row.pk))
    assert entry.before["when"] == "double(args.amount) <= 100.0"
    assert entry.after["when"] == "double(args.amount) <= 50.0"
    page = client.get("/admin/policies/policyrule/").content.decode()
    replaced = re.search(r'data-name="small-refunds">.*?<td class="replaced-by">(.*?)</td>', page, re.S).group(1)
    assert "admin rule small-refunds" in replaced
    first = rules_for("refund-approval", "ask_for_approval")[0]
    assert (first.name, first.source) == ("small-refunds", "admin")
