"""Queue counts stop at ``COUNT_CAP``: a page at a million waiting items costs what it costs at the
cap, and shows "cap+" (the tabs, and the JSON snapshot's counts as cap + 1 for ``inbox.js``)."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from reviewconsole.inbox.items.selectors import InboxFilters, count_label, inbox_page
from reviewconsole.inbox.models import Queue
from tests.inbox.factories import make_items


@pytest.fixture
def capped(settings):
    settings.REVIEWCONSOLE = {**settings.REVIEWCONSOLE, "COUNT_CAP": 3}
    cache.clear()


def test_counts_stop_one_past_the_cap(capped, manager):
    queues = {q.slug: q for q in Queue.objects.all()}
    make_items(queues["support"], 5, due_at=timezone.now() - dt.timedelta(minutes=1))
    make_items(queues["sales"], 2)
    page = inbox_page(manager, InboxFilters(), size=50)
    assert page.counts == {queues["support"].pk: 4, queues["sales"].pk: 2}
    assert page.overdue_counts == {queues["support"].pk: 4}
    assert [count_label(n) for n in (0, 3, 4)] == ["0", "3", "3+"]
    assert len(page.items) == 7  # the list itself is not capped


def test_the_tabs_show_the_cap_and_the_snapshot_counts_past_it(capped, manager):
    queues = {q.slug: q for q in Queue.objects.all()}
    make_items(queues["support"], 5)
    client = Client()
    client.force_login(manager)
    html = client.get("/inbox/").content.decode()
    badge = re.search(rf'data-count-for="{queues["support"].pk}" aria-label="([^"]+)">([^<]+)<', html)
    assert badge is not None and badge.groups() == ("3+ waiting", "3+")
    assert '"count_cap": 3' in html
    snapshot = client.get("/inbox/items.json").json()
    assert snapshot["counts"][str(queues["support"].pk)] == 4
