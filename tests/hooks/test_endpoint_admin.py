"""The webhook endpoint admin: the workflow is picked from the registry, never typed; an endpoint
whose workflow is no longer registered is shown as such."""

from __future__ import annotations

import re

from reviewconsole.hooks.admin import WebhookEndpointForm
from reviewconsole.hooks.models import WebhookEndpoint

ADD = "/admin/hooks/webhookendpoint/add/"


def _form_data(**change):
    return {
        "slug": "orders",
        "workflow": "refund-approval",
        "enabled": "on",
        "description": "",
        "input_mapping": "{}",
        "rate_limit": "",
        "secrets-TOTAL_FORMS": "0",
        "secrets-INITIAL_FORMS": "0",
        **change,
    }


def test_the_workflow_is_a_select_of_the_registered_workflows(client, personas):
    client.force_login(personas.admin)
    page = client.get(ADD).content.decode()
    select = re.search(r'<select name="workflow".*?</select>', page, re.S).group(0)
    values = re.findall(r'<option value="([^"]*)"', select)
    assert values == ["", "email-review", "incident-triage", "refund-approval", "support-handoff", "vip-discount"]
    assert "Refund approval (refund-approval)" in select
    assert '<input type="text" name="workflow"' not in page


def test_a_registered_workflow_is_saved(client, personas):
    client.force_login(personas.admin)
    response = client.post(ADD, _form_data())
    assert response.status_code == 302, response.content.decode()[:2000]
    assert WebhookEndpoint.objects.get(slug="orders").workflow == "refund-approval"


def test_a_name_that_is_not_registered_is_refused(client, personas):
    client.force_login(personas.admin)
    response = client.post(ADD, _form_data(workflow="retired-orders"))
    assert response.status_code == 200
    assert "retired-orders is not one of the available choices" in response.content.decode()
    assert not WebhookEndpoint.objects.filter(slug="orders").exists()


def test_an_endpoint_left_on_an_unregistered_workflow_is_shown_as_such(client, personas):
    endpoint = WebhookEndpoint.objects.create(slug="old-orders", workflow="retired-orders")
    WebhookEndpoint.objects.create(slug="refunds", workflow="refund-approval")
    client.force_login(personas.admin)
    listing = client.get("/admin/hooks/webhookendpoint/").content.decode()
    assert "retired-orders (not registered: deliveries answer 404)" in listing
    assert "refund-approval (not registered" not in listing

    form = WebhookEndpointForm(instance=endpoint)
    assert ("retired-orders", "retired-orders (not registered)") in form.fields["workflow"].choices
    kept = WebhookEndpointForm(_form_data(slug="old-orders", workflow="retired-orders"), instance=endpoint)
    assert not kept.is_valid()
    assert kept.errors["workflow"] == ["'retired-orders' is not a registered workflow: pick one of the list."]
    moved = WebhookEndpointForm(_form_data(slug="old-orders", workflow="email-review"), instance=endpoint)
    assert moved.is_valid(), moved.errors
