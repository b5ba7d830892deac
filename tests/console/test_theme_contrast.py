"""Both colour schemes of ``static/console/console.css`` meet WCAG 2.2 AA contrast: 4.5:1 for
text on every background it is used on, 3:1 for outlines (1.4.11). The pairs are read from the
stylesheet's ``light-dark()`` custom properties, so a colour changed there is checked here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CSS = Path(__file__).resolve().parents[2] / "static" / "console" / "console.css"

TEXT = {
    "fg": ["bg", "surface", "surface-2", "overdue-row", "selected-row", "accent-soft"],
    "muted": ["bg", "surface", "surface-2", "overdue-row", "selected-row"],
    "accent": ["bg", "surface", "surface-2", "accent-soft", "selected-row", "overdue-row"],
    "on-accent": ["accent"],
    "danger": ["surface", "danger-soft", "overdue-row", "bg"],
    "ok": ["surface", "ok-soft", "bg"],
    "warn": ["surface", "warn-soft", "bg"],
}
OUTLINES = {"border": ["surface", "bg"], "focus": ["surface", "bg"]}


def _palette() -> dict[str, tuple[str, str]]:
    found = re.findall(r"--([\w-]+):\s*light-dark\((#[0-9a-fA-F]{6}),\s*(#[0-9a-fA-F]{6})\)", CSS.read_text())
    return {name: (light, dark) for name, light, dark in found}


def _luminance(hex_colour: str) -> float:
    channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _pairs(rules: dict[str, list[str]]) -> list[tuple[str, str]]:
    return [(fg, bg) for fg, backgrounds in rules.items() for bg in backgrounds]


def test_the_contrast_formula_matches_wcag():
    assert contrast("#000000", "#ffffff") == pytest.approx(21)
    assert contrast("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)


@pytest.mark.parametrize("scheme", [0, 1], ids=["light", "dark"])
@pytest.mark.parametrize(("fg", "bg"), _pairs(TEXT))
def test_text_meets_aa(scheme, fg, bg):
    palette = _palette()
    ratio = contrast(palette[fg][scheme], palette[bg][scheme])
    assert ratio >= 4.5, f"--{fg} on --{bg}: {ratio:.2f}"


@pytest.mark.parametrize("scheme", [0, 1], ids=["light", "dark"])
@pytest.mark.parametrize(("fg", "bg"), _pairs(OUTLINES))
def test_outlines_meet_three_to_one(scheme, fg, bg):
    palette = _palette()
    ratio = contrast(palette[fg][scheme], palette[bg][scheme])
    assert ratio >= 3, f"--{fg} on --{bg}: {ratio:.2f}"
