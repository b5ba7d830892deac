"""Outbound events go to public addresses only unless ``OUTBOUND_ALLOW_PRIVATE`` is set, and a
receiver's reply body is never kept for auditors to read (issue 13)."""

from __future__ import annotations

import pytest

from reviewconsole.outbound.addresses import PrivateAddressError, check_destination
from reviewconsole.outbound.admin import SubscriptionForm
from reviewconsole.outbound.models import EVENT_TYPES, Attempt, OutboundMessage
from reviewconsole.outbound.services import message_deliver

BLOCKED = [
    "http://127.0.0.1:8000/hook",
    "http://localhost/hook",
    "http://169.254.169.254/latest/meta-data/",
    "http://10.1.2.3/",
    "http://192.168.0.10/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://0.0.0.0/",
    "https://[2002:7f00:1::]/",  # 6to4 (RFC 3056) around 127.0.0.1
    "https://[2002:a9fe:a9fe::]/",  # 6to4 around 169.254.169.254
    "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",  # Teredo
]


@pytest.fixture
def strict(settings):
    settings.REVIEWCONSOLE = {**settings.REVIEWCONSOLE, "OUTBOUND_ALLOW_PRIVATE": False}


@pytest.mark.parametrize("url", BLOCKED)
def test_loopback_link_local_and_private_addresses_are_refused(strict, url):
    with pytest.raises(PrivateAddressError):
        check_destination(url)


@pytest.mark.parametrize("url", ["https://93.184.216.34/hook", "https://[2002:5db8:d822::1]/hook"])  # the last: 6to4
def test_a_public_address_is_allowed(strict, url):
    check_destination(url)


def test_the_setting_allows_private_addresses(settings):
    settings.REVIEWCONSOLE = {**settings.REVIEWCONSOLE, "OUTBOUND_ALLOW_PRIVATE": True}
    check_destination("http://127.0.0.1:9/")


def test_the_admin_form_refuses_a_private_url(strict, db):
    form = SubscriptionForm(
        data={"name": "x", "url": "http://169.254.169.254/", "events": list(EVENT_TYPES), "secret": "whsec_QUFBQUFB"}
    )
    assert not form.is_valid() and "public addresses only" in str(form.errors["url"])


def test_an_attempt_to_a_private_address_is_refused_before_sending(strict, subscription, receiver):
    message = OutboundMessage.objects.create(
        subscription=subscription, event_type="session.completed", payload={}, attempt_limit=1
    )
    assert message_deliver(message_id=message.pk) == "failed"
    assert receiver.received == []
    assert Attempt.objects.get(message=message).error.startswith("Refused:")


def test_a_receivers_reply_body_is_not_kept(subscription, receiver):
    receiver.statuses = [500]
    message = OutboundMessage.objects.create(
        subscription=subscription, event_type="session.completed", payload={}, attempt_limit=1
    )
    message_deliver(message_id=message.pk)
    attempt = Attempt.objects.get(message=message)
    assert attempt.status_code == 500 and attempt.error == "HTTP 500"
    message.refresh_from_db()
    assert "nope" not in message.last_error
