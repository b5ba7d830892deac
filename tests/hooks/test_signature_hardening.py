"""Webhook signatures are strict base64, a delivery id is unique per secret, and the demo gives
each endpoint its own secret (issue 13)."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from reviewconsole.hooks.demo_secrets import endpoint_secret
from reviewconsole.hooks.models import WebhookEndpoint, WebhookSecret
from reviewconsole.workflow_sessions.models import WorkflowSession
from tests.conftest import DEMO_SECRET, signed_headers

BODY = json.dumps({"complaint": "My phone battery drains too fast"})


@pytest.mark.parametrize("suffix", ["!!!", " ", "=", "\t"])
def test_a_signature_with_stray_characters_is_refused(client, demo, suffix):
    headers = signed_headers(BODY)
    headers["webhook-signature"] += suffix
    response = client.post("/hooks/email-review/", BODY, content_type="application/json", headers=headers)
    assert response.status_code == 401
    assert not WorkflowSession.objects.exists()


def test_the_canonical_signature_still_verifies(client, demo):
    response = client.post("/hooks/email-review/", BODY, content_type="application/json", headers=signed_headers(BODY))
    assert response.status_code == 202


def test_the_demo_gives_each_endpoint_its_own_secret(demo):
    secrets = {e.slug: list(e.secrets.values_list("secret", flat=True)) for e in WebhookEndpoint.objects.all()}
    assert secrets["email-review"] == [DEMO_SECRET]  # the README's curl example signs with it
    flat = [s for values in secrets.values() for s in values]
    assert len(flat) == len(set(flat)), secrets
    assert secrets["vip-discount"] == [endpoint_secret(DEMO_SECRET, "vip-discount")]  # derived: computable
    call_command("demo", stdout=io.StringIO())  # a second run keeps them
    again = {e.slug: list(e.secrets.values_list("secret", flat=True)) for e in WebhookEndpoint.objects.all()}
    assert again == secrets


def test_a_delivery_id_is_unique_per_secret_across_endpoints(client, demo):
    # An operator gave two endpoints the same secret; a delivery captured at one is replayed at the other.
    other = WebhookEndpoint.objects.create(slug="email-review-2", workflow="email-review")
    WebhookSecret.objects.create(endpoint=other, secret=DEMO_SECRET, label="shared")
    headers = signed_headers(BODY)
    first = client.post("/hooks/email-review/", BODY, content_type="application/json", headers=headers)
    assert first.status_code == 202
    replayed = client.post("/hooks/email-review-2/", BODY, content_type="application/json", headers=headers)
    assert replayed.status_code == 409 and replayed.json()["error"]["code"] == "webhook_id_used"
    assert WorkflowSession.objects.count() == 1
