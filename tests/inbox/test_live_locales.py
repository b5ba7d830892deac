"""Live rows in each reader's locale, through the real ASGI stack (session cookie → consumer): a
new refund reaches a ``de-DE`` reader and an ``en-US`` reader of its queue, each with the row's
money written as in their locale; the row is rendered once per distinct locale, not per reader."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from reviewconsole.asgi import application
from reviewconsole.inbox.live.messages import group_message, reader_locales
from reviewconsole.inbox.models import Queue, QueueChange
from reviewconsole.preferences.models import Preference
from reviewconsole.workflow_sessions.services import session_start
from tests.conftest import make_outsider

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 5  # seconds to wait for a message that must come
REFUND = {"order_id": "A-17", "amount": 1250, "reason": "Arrived broken"}
GERMAN = "Refund 1.250,00\u00a0$ for order A-17"
AMERICAN = "Refund $1,250.00 for order A-17"


def _cookie_for(user):
    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


def _readers():
    """``manager`` (every queue, no locale saved: ``en-US``) and two ``finance`` reviewers in ``de-DE``."""
    from django.contrib.auth.models import User

    german = [make_outsider("ines"), make_outsider("jonas")]
    for person in german:
        Preference.objects.create(user=person, locale="de-DE", locale_chosen=True)
    return [_cookie_for(User.objects.get(username="manager"))] + [_cookie_for(person) for person in german]


@pytest.fixture
async def sockets(demo_tx):
    """One open ``/ws/inbox/`` socket per reader of :func:`_readers`, past its hello."""
    opened = []
    for cookie in await database_sync_to_async(_readers)():
        headers = [(b"origin", b"http://testserver"), (b"cookie", cookie.encode())]
        communicator = WebsocketCommunicator(application, "/ws/inbox/", headers=headers)
        opened.append(communicator)
        assert (await communicator.connect(timeout=TIMEOUT))[0]
        assert (await communicator.receive_json_from(timeout=TIMEOUT))["event"] == "hello"
    yield opened
    for communicator in opened:
        await communicator.disconnect()
    await get_channel_layer().flush()


async def test_each_reader_gets_the_new_row_in_their_locale(sockets):
    american, ines, jonas = sockets
    await database_sync_to_async(session_start)(workflow="refund-approval", data=REFUND, user_id="test")

    rows = {}
    for name, communicator in (("american", american), ("ines", ines), ("jonas", jonas)):
        message = await communicator.receive_json_from(timeout=TIMEOUT)
        assert message["event"] == "interrupt.created"
        rows[name] = message["row"]
    assert AMERICAN in rows["american"] and "1.250,00" not in rows["american"]
    assert GERMAN in rows["ines"] and "$1,250.00" not in rows["ines"]
    assert rows["jonas"] == rows["ines"]


def test_the_row_is_rendered_once_per_distinct_locale_of_the_queues_readers(demo):
    from django.contrib.auth.models import User

    finance = Queue.objects.get(slug="finance")
    for name, tag in (("ines", "de-DE"), ("jonas", "de-DE"), ("chloe", "fr-FR")):
        Preference.objects.create(user=make_outsider(name), locale=tag)
    Preference.objects.create(user=User.objects.get(username="manager"), locale="en-US")
    outside = User.objects.create_user("kenji")  # in no queue: their locale is nobody's row
    Preference.objects.create(user=outside, locale="ja-JP")
    assert reader_locales(finance) == {"de-DE", "fr-FR"}

    session_start(workflow="refund-approval", data=REFUND, user_id="test")
    change = QueueChange.objects.filter(queue=finance, event="interrupt.created").latest("version")
    message = group_message(change)
    assert AMERICAN in json.loads(message["text"])["row"]  # en-US: also what the API's review wait reads
    assert sorted(message["texts"]) == ["de-DE", "fr-FR"]
    assert GERMAN in json.loads(message["texts"]["de-DE"])["row"]
    assert "1\u202f250,00\u00a0$US" in json.loads(message["texts"]["fr-FR"])["row"]


def test_a_message_without_a_row_is_the_same_for_every_locale(demo):
    finance = Queue.objects.get(slug="finance")
    Preference.objects.create(user=make_outsider("ines"), locale="de-DE")
    session_start(workflow="refund-approval", data=REFUND, user_id="test")
    change = QueueChange.objects.filter(queue=finance, event="interrupt.created").latest("version")
    change.event = "interrupt.claimed"
    assert "texts" not in group_message(change) and "row" not in json.loads(group_message(change)["text"])
