"""The managers' dashboard (issue 17): its figures per queue and workflow, who may see which
queue, the window, the SVG charts (no colour of their own, no inline style), and its queries
(a fixed number, each on an index).

Live updates in a real browser: ``tests/browser/test_dashboard.py``; at 100,000 items:
``bench/bench_dashboard.py``.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from django.contrib.staticfiles import finders
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from reviewconsole.console.dashboard.charts import duration_text
from reviewconsole.console.dashboard.figures import dashboard_figures, nearest_rank
from reviewconsole.inbox.models import Item, Queue
from reviewconsole.workflow_sessions.models import WorkflowSession

NOW = dt.datetime(2026, 12, 2, 12, 0, tzinfo=dt.UTC)


@pytest.fixture
def rows(demo):
    """``add(queue, workflow, …)`` inserts an item with the times given (rows only, no workflow runs)."""
    sessions: dict[str, WorkflowSession] = {}
    field = Item._meta.get_field("created_at")
    counter = iter(range(1, 100_000))

    def add(queue="support", workflow="email-review", *, asked, decided=None, by=None, label="", due=None):
        session = sessions.get(workflow) or WorkflowSession.objects.create(workflow=workflow, user_id="test")
        sessions[workflow] = session
        field.auto_now_add = False
        try:
            return Item.objects.create(
                session=session,
                workflow=workflow,
                interrupt_id=f"i{next(counter)}",
                kind="input",
                queue=Queue.objects.get(slug=queue),
                status="resolved" if decided else "pending",
                decision="approve" if decided else "",
                decided_by=by,
                decided_by_label=label or (by.username if by else ""),
                decided_at=decided,
                created_at=asked,
                due_at=due,
            )
        finally:
            field.auto_now_add = True

    return add


def _row(figures, queue, workflow):
    [row] = [r for r in figures.rows if r.queue.slug == queue and r.workflow == workflow]
    return row


def test_waiting_overdue_decisions_per_day_and_by_whom(rows, manager):
    hour = dt.timedelta(hours=1)
    rows(asked=NOW - hour, due=NOW - dt.timedelta(minutes=5))  # overdue
    rows(asked=NOW - hour, due=NOW + hour)  # due later
    rows(asked=NOW - hour)
    rows(asked=NOW - 3 * hour, decided=NOW - 2 * hour, by=manager)  # today, a person, 1 h
    rows(asked=NOW - dt.timedelta(days=2), decided=NOW - dt.timedelta(days=2) + hour, label="policy: small-refunds")
    rows(asked=NOW - dt.timedelta(days=3), decided=NOW - dt.timedelta(days=3) + hour, label="client:erp")
    rows(asked=NOW - dt.timedelta(days=20), decided=NOW - dt.timedelta(days=20) + hour, by=manager)  # outside 14 days
    rows("sales", "vip-discount", asked=NOW - hour)

    figures = dashboard_figures(manager, days=14, now=NOW)
    support = _row(figures, "support", "email-review")
    assert (support.waiting, support.overdue) == (3, 1)
    assert support.decided == {"people": 1, "policy": 1, "other": 1}
    assert [day["date"] for day in support.per_day][-1] == "2026-12-02" and len(support.per_day) == 14
    by_date = {day["date"]: day for day in support.per_day}
    assert by_date["2026-12-02"]["people"] == 1
    assert by_date["2026-11-30"]["policy"] == 1
    assert by_date["2026-11-29"]["other"] == 1
    assert (support.p50, support.p90) == (3600.0, 3600.0)
    assert figures.next_due == NOW + hour
    sales = _row(figures, "sales", "vip-discount")
    assert (sales.waiting, sales.overdue, sales.decided_total, sales.p50) == (1, 0, 0, None)
    assert {(r.queue.slug, r.workflow) for r in figures.rows} == {
        ("support", "email-review"),
        ("sales", "vip-discount"),
    }

    wider = _row(dashboard_figures(manager, days=30, now=NOW), "support", "email-review")
    assert wider.decided == {"people": 2, "policy": 1, "other": 1}


@pytest.mark.parametrize(("minutes", "p50", "p90"), [([1], 1, 1), ([1, 2], 1, 2), (list(range(1, 11)), 5, 9)])
def test_time_to_decision_is_the_nearest_rank_percentile(rows, manager, minutes, p50, p90):
    for n in reversed(minutes):  # not in order: the database ranks them
        rows(
            asked=NOW - dt.timedelta(hours=1), decided=NOW - dt.timedelta(hours=1) + dt.timedelta(minutes=n), by=manager
        )
    row = _row(dashboard_figures(manager, now=NOW), "support", "email-review")
    assert (row.p50, row.p90) == (p50 * 60.0, p90 * 60.0)


def test_nearest_rank_in_integers():
    assert [nearest_rank(list(range(1, 71)), 9, 10), nearest_rank([5.0], 9, 10), nearest_rank([], 1, 2)] == [
        63,
        5.0,
        None,
    ]


def test_p90_of_seventy_decisions_is_the_sixty_third(rows, manager):
    """Nearest rank in integers: 70 × 0.9 is 63.000000000000014 in floating point, ceil 64."""
    for n in range(1, 71):
        rows(asked=NOW - dt.timedelta(days=1), decided=NOW - dt.timedelta(days=1) + dt.timedelta(seconds=n), by=manager)
    row = _row(dashboard_figures(manager, now=NOW), "support", "email-review")
    assert (row.p50, row.p90) == (35.0, 63.0)


def test_days_are_the_person_s_calendar_days(rows, manager):
    """23:30 UTC on Dec 1 is Dec 2 in Auckland (UTC+13)."""
    rows(asked=NOW - dt.timedelta(days=1), decided=dt.datetime(2026, 12, 1, 23, 30, tzinfo=dt.UTC), by=manager)
    utc = _row(dashboard_figures(manager, now=NOW), "support", "email-review")
    assert {d["date"]: d["people"] for d in utc.per_day}["2026-12-01"] == 1
    with timezone.override(ZoneInfo("Pacific/Auckland")):
        auckland = _row(dashboard_figures(manager, now=NOW), "support", "email-review")
    assert {d["date"]: d["people"] for d in auckland.per_day}["2026-12-02"] == 1
    assert auckland.per_day[-1]["date"] == "2026-12-03"  # already tomorrow there


def test_a_manager_sees_only_the_queues_they_manage(rows, personas, client):
    rows(asked=NOW)
    rows("finance", "refund-approval", asked=NOW)
    figures = dashboard_figures(personas.queue_manager, now=NOW)
    assert {row.queue.slug for row in figures.rows} == {"support"}
    client.force_login(personas.queue_manager)
    answer = client.get("/dashboard/figures.json").json()
    assert {row["queue"] for row in answer["rows"]} == {"support"}


def test_who_may_open_it(client, personas):
    for who, page, data in (("reviewer", 403, 403), ("auditor", 403, 403), ("queue_manager", 200, 200)):
        client.force_login(getattr(personas, who))
        assert client.get("/dashboard/").status_code == page, who
        assert client.get("/dashboard/figures.json").status_code == data, who
    client.logout()
    assert client.get("/dashboard/")["Location"].startswith("/accounts/login/")
    assert client.get("/dashboard/figures.json").json()["error"]["code"] == "unauthorized"


def test_the_nav_links_the_dashboard_for_managers_only(client, personas):
    client.force_login(personas.queue_manager)
    assert 'href="/dashboard/"' in client.get("/inbox/").content.decode()
    client.force_login(personas.reviewer)
    assert 'href="/dashboard/"' not in client.get("/inbox/").content.decode()


def test_the_window_is_7_14_or_30_days(client, manager):
    client.force_login(manager)
    for days in (7, 14, 30):
        assert len(client.get("/dashboard/figures.json", {"days": days}).json()["days"]) == days
    for bad in ("5", "x", "-1"):
        response = client.get("/dashboard/figures.json", {"days": bad})
        assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_days"
        assert client.get("/dashboard/", {"days": bad}).status_code == 400


def test_the_charts_are_svg_with_words_and_no_colour_of_their_own(rows, client, manager):
    now = timezone.now()
    rows(asked=now - dt.timedelta(hours=2), due=now - dt.timedelta(minutes=1))
    rows(asked=now - dt.timedelta(hours=3), decided=now, by=manager)
    client.force_login(manager)
    page = client.get("/dashboard/").content.decode()
    charts = re.findall(r"<svg [^>]*>", page)
    assert len(charts) >= 5
    assert all('role="img"' in svg and "aria-label=" in svg for svg in charts)
    assert "1 waiting, 1 of them overdue" in page
    assert " style=" not in page  # the CSP allows no inline style
    assert 'href="/static/console/dashboard.css"' in page
    css = Path(finders.find("console/dashboard.css")).read_text()
    assert not re.search(r"#[0-9a-fA-F]{3,8}\b|rgb\(|hsl\(", css), "colours come from console.css's variables"
    for variable in ("--accent", "--danger", "--ok", "--muted", "--line"):
        assert f"var({variable})" in css
    panel = client.get("/dashboard/panel/").content.decode()
    assert panel.lstrip().startswith('<div id="dashboard-figures"') and "<html" not in panel


def test_a_title_from_outside_is_escaped(rows, client, manager):
    queue = Queue.objects.get(slug="support")
    queue.name = "<script>alert(1)</script>"
    queue.save()
    rows(asked=NOW)
    client.force_login(manager)
    page = client.get("/dashboard/").content.decode()
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;" in page


def test_the_figures_take_a_fixed_number_of_queries_each_on_an_index(rows, manager, capsys):
    for n in range(40):
        rows(asked=NOW - dt.timedelta(hours=n + 1), decided=NOW - dt.timedelta(minutes=n), by=manager)
        rows("finance", "refund-approval", asked=NOW - dt.timedelta(hours=n), due=NOW + dt.timedelta(hours=n - 3))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    with CaptureQueriesContext(connection) as captured:
        dashboard_figures(manager, now=NOW)
    items = [q["sql"] for q in captured.captured_queries if '"inbox_item"' in q["sql"]]
    assert len(items) == 5, items  # waiting, overdue, the next due time, per day, durations
    for n in range(40):  # twice the items, the same queries
        rows("sales", "vip-discount", asked=NOW - dt.timedelta(hours=n + 1), decided=NOW, label="policy: vip")
    with CaptureQueriesContext(connection) as again:
        dashboard_figures(manager, now=NOW)
    assert len(again.captured_queries) == len(captured.captured_queries)
    if connection.vendor != "sqlite":
        return  # the plans below are SQLite's (EXPLAIN QUERY PLAN)
    with connection.cursor() as cursor, capsys.disabled():
        print("\nEXPLAIN QUERY PLAN, the dashboard's figures:")
        for sql in items:
            cursor.execute(f"EXPLAIN QUERY PLAN {sql}")
            plan = [row[-1] for row in cursor.fetchall()]
            print("  " + " | ".join(plan))
            on_items = [line for line in plan if "inbox_item" in line]
            assert on_items, plan
            for line in on_items:
                assert "USING INDEX" in line or "USING COVERING INDEX" in line, (line, sql)


@pytest.mark.parametrize(
    ("seconds", "text"), [(None, "—"), (45, "45 s"), (600, "10 min"), (3 * 3600, "3.0 h"), (3 * 86400, "3.0 d")]
)
def test_durations_read_as_people_say_them(seconds, text):
    assert duration_text(seconds) == text
