"""The webhook endpoint admin: the workflow is picked from the registry, never typed; an endpoint
whose workflow is no longer registered is shown as such; a stored secret is never rendered, a
generated one is shown once."""

from __future__ import annotations

import base64
import hashlib
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


STORED = "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="


def _secret_form(endpoint, **change):
    return _form_data(
        slug=endpoint.slug,
        **{
            "secrets-TOTAL_FORMS": "2",
            "secrets-INITIAL_FORMS": "1",
            "secrets-0-id": str(endpoint.secrets.get().pk),
            "secrets-0-endpoint": str(endpoint.pk),
            "secrets-0-label": "first",
            "secrets-1-endpoint": str(endpoint.pk),
            "secrets-1-label": "rotated",
            **change,
        },
    )


def test_a_stored_secret_is_never_rendered_not_even_to_a_superuser(client, personas):
    """Found by the last session's review: the form showed the endpoint's whsec_ secret in its HTML."""
    endpoint = WebhookEndpoint.objects.create(slug="orders", workflow="refund-approval")
    endpoint.secrets.create(secret=STORED, label="first")
    client.force_login(personas.admin)
    page = client.get(f"/admin/hooks/webhookendpoint/{endpoint.pk}/change/").content.decode()
    assert STORED not in page and STORED.removeprefix("whsec_")[:12] not in page
    assert "sha256:" + hashlib.sha256(STORED.encode()).hexdigest()[:12] in page  # which one it is
    response = client.post(f"/admin/hooks/webhookendpoint/{endpoint.pk}/change/", _secret_form(endpoint))
    assert response.status_code == 200, response.content.decode()[:3000]
    assert endpoint.secrets.get(label="first").secret == STORED  # kept as it was


def test_a_generated_secret_is_shown_once_and_a_pasted_one_never(client, personas):
    endpoint = WebhookEndpoint.objects.create(slug="orders", workflow="refund-approval")
    endpoint.secrets.create(secret=STORED, label="first")
    client.force_login(personas.admin)
    url = f"/admin/hooks/webhookendpoint/{endpoint.pk}/change/"
    answer = client.post(url, _secret_form(endpoint))
    generated = endpoint.secrets.get(label="rotated").secret
    assert generated.startswith("whsec_") and len(base64.b64decode(generated.removeprefix("whsec_"))) == 24
    body = answer.content.decode()
    assert re.findall(r'<code class="generated-secret">([^<]+)</code>', body) == [generated]
    assert "no-store" in answer["Cache-Control"] and STORED not in body
    assert generated not in client.get(url).content.decode(), "shown once"

    pasted = "whsec_" + base64.b64encode(b"p" * 32).decode()
    endpoint.secrets.filter(label="rotated").delete()
    answer = client.post(url, _secret_form(endpoint, **{"secrets-1-secret": pasted}))
    assert answer.status_code == 302
    assert endpoint.secrets.get(label="rotated").secret == pasted
    assert pasted not in client.get(url).content.decode()

    endpoint.secrets.filter(label="rotated").delete()
    refused = client.post(url, _secret_form(endpoint, **{"secrets-1-secret": "hunter2"}))
    assert refused.status_code == 200 and "Not a webhook secret" in refused.content.decode()
    assert "hunter2" not in refused.content.decode(), "a refused secret is not filled back either"
