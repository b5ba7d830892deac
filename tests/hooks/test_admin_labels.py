"""Admin labels: "webhook deliveries" and "deliveries", never "deliverys"."""

from __future__ import annotations

from reviewconsole.hooks.models import WebhookDelivery
from reviewconsole.workflow_sessions.models import Delivery


def test_delivery_models_have_proper_plurals():
    assert WebhookDelivery._meta.verbose_name_plural == "webhook deliveries"
    assert Delivery._meta.verbose_name_plural == "deliveries"


def test_the_admin_index_and_lists_say_deliveries(client, personas):
    client.force_login(personas.admin)
    index = client.get("/admin/").content.decode()
    assert "Webhook deliveries" in index and ">Deliveries<" in index
    assert "eliverys" not in index
    listing = client.get("/admin/hooks/webhookdelivery/").content.decode()
    assert "eliverys" not in listing and "webhook deliveries" in listing.lower()
