"""The admin's replay message shows the webhook id as it is (the admin capitalises a message's
first letter, so the message must not start with the id)."""

from __future__ import annotations

from reviewconsole.hooks.models import WebhookDelivery
from tests.conftest import COMPLAINT, post_webhook


def test_the_replay_message_keeps_the_id_as_it_is(client, personas, on_commit):
    with on_commit():
        post_webhook(client, {"complaint": COMPLAINT}, webhook_id="msg_55d5abc")
    original = WebhookDelivery.objects.get(webhook_id="msg_55d5abc")
    client.force_login(personas.admin)
    with on_commit():
        response = client.post(
            "/admin/hooks/webhookdelivery/", {"action": "replay", "_selected_action": [original.pk]}, follow=True
        )
    page = response.content.decode()
    assert "Delivery msg_55d5abc: replayed, answer 202." in page
    assert "Msg_55d5abc" not in page
