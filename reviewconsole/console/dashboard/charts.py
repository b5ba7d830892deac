"""The dashboard's charts, drawn on the server as SVG: the shapes (rectangles in a ``viewBox``) and
the sentence a screen reader says for each (``label``), from :class:`.figures.Dashboard`.

The templates (``console/_dashboard_panel.html``) draw the shapes with classes only (``bar
people``, ``bar overdue``…): ``static/console/dashboard.css`` colours them with the console's
variables (``--accent``, ``--danger``, ``--ok``, ``--muted``, ``--line``), so a theme changes
them, and no inline style is needed (the CSP allows none).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .figures import DECIDERS, Dashboard, Row

__all__ = ["Bar", "Chart", "DayChart", "RowCharts", "charts_for", "duration_text"]

BAR_WIDTH = 120.0
"""The width of a row's bar charts in their ``viewBox`` units (their height is 14)."""
DAY_CHART = (960.0, 150.0)
"""The decisions-per-day chart's ``viewBox`` width and height: stretched to the page's width and a
fixed height (``preserveAspectRatio="none"``); its day labels are HTML below it (``ticks``)."""
DECIDER_NAMES = {"people": "people", "policy": "approval policies", "other": "API clients and expiry"}


@dataclass(frozen=True)
class Bar:
    """One rectangle: ``css`` its classes, ``x``/``y``/``width``/``height`` in ``viewBox`` units."""

    css: str
    x: float
    width: float
    y: float = 0.0
    height: float = 14.0


@dataclass(frozen=True)
class Chart:
    """An SVG: its ``viewBox`` size, its rectangles and what a screen reader says of it."""

    label: str
    bars: list[Bar]
    width: float = BAR_WIDTH
    height: float = 14.0


@dataclass(frozen=True)
class DayChart(Chart):
    """The decisions per day: the bars, a label per day (``ticks``: "" for the days left unlabelled,
    so that labels do not run into each other) and the largest day's total."""

    ticks: list[str] = field(default_factory=list)
    peak: int = 0


@dataclass(frozen=True)
class RowCharts:
    """A row of the table, its four charts and its times to decision as text."""

    row: Row
    waiting: Chart
    per_day: Chart
    turnaround: Chart
    deciders: Chart
    p50: str
    p90: str


def duration_text(seconds: float | None) -> str:
    """``"45 s"``, ``"12 min"``, ``"3.2 h"``, ``"2.1 d"``; ``"—"`` for None."""
    if seconds is None:
        return "—"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 36 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} d"


def _share(value: float, largest: float, width: float = BAR_WIDTH) -> float:
    return round(width * value / largest, 2) if largest > 0 else 0.0


def _side_by_side(counts: dict[str, int], total: float) -> list[Bar]:
    """One rectangle per decider, side by side, their widths the shares of ``total``."""
    bars, x = [], 0.0
    for kind in DECIDERS:
        part = _share(counts[kind], total)
        if part:
            bars.append(Bar(css=f"bar {kind}", x=round(x, 2), width=part))
        x += part
    return bars


def _day_chart(dashboard: Dashboard) -> DayChart:
    width, height = DAY_CHART
    plot = height
    days = len(dashboard.days)
    totals = [{kind: sum(row.per_day[n][kind] for row in dashboard.rows) for kind in DECIDERS} for n in range(days)]
    peak = max((sum(day.values()) for day in totals), default=0)
    slot = width / days
    bars: list[Bar] = []
    for n, day in enumerate(totals):
        y = plot
        for kind in DECIDERS:  # stacked upwards: people at the bottom
            tall = _share(day[kind], peak, plot)
            if tall:
                y -= tall
                bars.append(
                    Bar(
                        css=f"bar {kind}",
                        x=round(n * slot + slot * 0.15, 2),
                        width=round(slot * 0.7, 2),
                        y=round(y, 2),
                        height=tall,
                    )
                )
    step = 1 if days <= 7 else (3 if days <= 14 else 7)
    ticks = [f"{day:%b} {day.day}" if (days - 1 - n) % step == 0 else "" for n, day in enumerate(dashboard.days)]
    said = ", ".join(
        f"{day:%b} {day.day}: {sum(total.values())}"
        for day, total in zip(dashboard.days, totals, strict=True)
        if sum(total.values())
    )
    label = f"Decisions per day over {days} days, at most {peak} a day" + (f": {said}" if said else ": none")
    return DayChart(label=label, bars=bars, width=width, height=height, ticks=ticks, peak=peak)


def _row_charts(row: Row, most_waiting: int, longest: float) -> RowCharts:
    waiting = Chart(
        label=f"{row.waiting} waiting, {row.overdue} of them overdue",
        bars=[
            Bar(css="bar waiting", x=0, width=_share(row.waiting, most_waiting)),
            Bar(css="bar overdue", x=0, width=_share(row.overdue, most_waiting)),
        ],
    )
    days = len(row.per_day)
    day_totals = [sum(day[kind] for kind in DECIDERS) for day in row.per_day]
    peak = max(day_totals, default=0)
    slot = BAR_WIDTH / max(days, 1)
    per_day = Chart(
        label=f"{row.decided_total} decided in {days} days; per day: " + ", ".join(str(n) for n in day_totals),
        bars=[
            Bar(
                css="bar decided",
                x=round(n * slot + slot * 0.1, 2),
                width=round(slot * 0.8, 2),
                y=round(14 - _share(total, peak, 14), 2),
                height=_share(total, peak, 14),
            )
            for n, total in enumerate(day_totals)
            if total
        ],
    )
    turnaround = Chart(
        label=f"Time to decision: half within {duration_text(row.p50)}, nine in ten within {duration_text(row.p90)}",
        bars=[
            bar
            for bar in (
                Bar(css="bar p90", x=0, width=_share(row.p90 or 0, longest)),
                Bar(css="bar p50", x=0, width=_share(row.p50 or 0, longest)),
            )
            if bar.width
        ],
    )
    decided = row.decided
    deciders = Chart(
        label="Decided by " + ", ".join(f"{DECIDER_NAMES[kind]} {decided[kind]}" for kind in DECIDERS),
        bars=_side_by_side(decided, row.decided_total),
    )
    return RowCharts(
        row=row,
        waiting=waiting,
        per_day=per_day,
        turnaround=turnaround,
        deciders=deciders,
        p50=duration_text(row.p50),
        p90=duration_text(row.p90),
    )


def charts_for(dashboard: Dashboard) -> tuple[DayChart, list[RowCharts]]:
    """The decisions-per-day chart of all the rows, and each row's charts (bars on scales shared
    by the rows: the most waiting, the longest p90)."""
    most_waiting = max((row.waiting for row in dashboard.rows), default=0)
    longest = max((row.p90 or 0 for row in dashboard.rows), default=0)
    return _day_chart(dashboard), [_row_charts(row, most_waiting, longest) for row in dashboard.rows]
