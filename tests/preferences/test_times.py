"""Times for people (``preferences/times.py``) and when a countdown turns amber (``inbox/items/sla.py``)."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest
from django.utils import timezone

from reviewconsole.preferences.times import absolute, relative, span, time_tag

NOW = dt.datetime(2026, 12, 1, 18, 38, 5, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0 s"), (59, "59 s"), (60, "1 min"), (3599, "59 min"), (3600, "1 h"), (86399, "23 h"), (90000, "1 d")],
)
def test_a_span_is_its_largest_whole_unit(seconds, text):
    assert span(seconds) == span(-seconds) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(59, "59 s"), (3599, "59 min"), (3600, "1 h"), (17999, "4 h 59 min"), (86399, "23 h 59 min"), (90000, "1 d 1 h")],
)
def test_a_two_part_span_adds_the_next_unit_when_not_zero(seconds, text):
    assert span(seconds, 2) == span(-seconds, 2) == text


@pytest.mark.parametrize(
    ("offset", "mode", "text"),
    [
        (dt.timedelta(minutes=52, seconds=30), "due", "due in 52 min"),
        (dt.timedelta(seconds=-200), "due", "overdue by 3 min"),
        (dt.timedelta(seconds=40), "due", "due in 40 s"),
        (dt.timedelta(hours=3, minutes=59, seconds=30), "due", "due in 3 h 59 min"),
        (dt.timedelta(hours=-2, seconds=-10), "due", "overdue by 2 h"),
        (dt.timedelta(hours=-3, minutes=-10), "ago", "3 h ago"),
        (dt.timedelta(seconds=-20), "ago", "just now"),
        (dt.timedelta(days=2, hours=1), "ago", "in 2 d"),
    ],
)
def test_relative_times(offset, mode, text):
    assert relative(NOW + offset, mode, NOW) == text


def test_the_absolute_time_names_its_zone():
    assert absolute(NOW) == "2026-12-01 18:38:05 UTC"
    with timezone.override(zoneinfo.ZoneInfo("Europe/Berlin")):
        assert absolute(NOW) == "2026-12-01 19:38:05 CET (Europe/Berlin)"
    with timezone.override(zoneinfo.ZoneInfo("Asia/Kolkata")):
        assert absolute(NOW) == "2026-12-02 00:08:05 IST (Asia/Kolkata)"


def test_a_time_tag_escapes_what_it_is_given():
    html = time_tag(NOW, "due", extra_class='x" onmouseover="alert(1)', due_soon_at='"><b>')
    assert 'onmouseover="alert' not in html and "<b>" not in html
    assert html.startswith('<time datetime="2026-12-01T18:38:05+00:00" title="2026-12-01 18:38:05 UTC" data-rel="due"')
    assert str(time_tag(None)) == '<span class="muted">—</span>'


def test_a_countdown_turns_amber_a_quarter_before_at_most_four_hours(db):
    from reviewconsole.inbox.items.sla import due_soon_at, sla_state
    from reviewconsole.inbox.models import Item

    ten_minutes = Item(status="pending", created_at=NOW, due_at=NOW + dt.timedelta(minutes=10))
    assert due_soon_at(ten_minutes) == NOW + dt.timedelta(minutes=7, seconds=30)
    week = Item(status="pending", created_at=NOW, due_at=NOW + dt.timedelta(days=7))
    assert due_soon_at(week) == week.due_at - dt.timedelta(hours=4)
    assert sla_state(ten_minutes, NOW + dt.timedelta(minutes=7)) == ""
    assert sla_state(ten_minutes, NOW + dt.timedelta(minutes=8)) == "soon"
    assert sla_state(ten_minutes, NOW + dt.timedelta(minutes=10)) == "late"
    decided = Item(status="resolved", created_at=NOW, due_at=NOW + dt.timedelta(minutes=10))
    assert sla_state(decided, NOW + dt.timedelta(hours=1)) == ""
    assert due_soon_at(Item(status="pending", created_at=NOW)) is None


def test_a_decided_items_due_time_says_how_the_decision_stood_against_it(db):
    """Found in a new user's trial: a decided item's page said "was due in 3 h"."""
    from reviewconsole.inbox.models import Item
    from reviewconsole.inbox.templatetags.inbox_time import due_outcome

    due = NOW + dt.timedelta(hours=3)
    early = Item(status="resolved", decision="approve", due_at=due, decided_at=NOW - dt.timedelta(minutes=10))
    assert str(due_outcome(early)) == (
        '<span title="due 2026-12-01 21:38:05 UTC">decided 3 h 10 min before it was due</span>'
    )
    late = Item(status="resolved", decision="reject", due_at=NOW, decided_at=NOW + dt.timedelta(minutes=5))
    assert "decided 5 min after it was due" in str(due_outcome(late))
    expired = Item(status="resolved", decision="timeout", due_at=NOW, decided_at=NOW)
    assert "expired when it was due" in str(due_outcome(expired))
    assert str(due_outcome(Item(status="resolved", decision="approve", decided_at=NOW))) == ""
