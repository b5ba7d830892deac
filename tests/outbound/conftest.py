from __future__ import annotations

import pytest

from reviewconsole.outbound.models import EVENT_TYPES, Subscription
from tests.outbound.receiver import Receiver


@pytest.fixture
def receiver():
    server = Receiver().start()
    yield server
    server.stop()


@pytest.fixture
def subscription(demo, receiver):
    return Subscription.objects.create(name="crm", url=receiver.url, events=list(EVENT_TYPES))
