"""Admin labels: "webhook deliveries", never "deliverys"; a stored answer is an "answer" (issue 13)."""

from __future__ import annotations

from reviewconsole.hooks.models import WebhookDelivery
from reviewconsole.workflow_sessions.models import Answer


def test_the_models_have_proper_names():
    assert WebhookDelivery._meta.verbose_name_plural == "webhook deliveries"
    assert (Answer._meta.verbose_name, Answer._meta.verbose_name_plural) == ("answer", "answers")


def test_the_admin_index_and_lists_say_deliveries_for_webhooks_and_answers_for_stored_answers(client, personas):
    client.force_login(personas.admin)
    index = client.get("/admin/").content.decode()
    assert "Webhook deliveries" in index and ">Answers<" in index
    assert "eliverys" not in index and ">Deliveries<" not in index
    listing = client.get("/admin/hooks/webhookdelivery/").content.decode()
    assert "eliverys" not in listing and "webhook deliveries" in listing.lower()
