"""Numbers and words as people read them, for titles, summaries and the item page.

Money and numbers are written in the reader's locale (Babel): ``$1,250.00`` for ``en-US``,
``1.250,00 $`` for ``de-DE`` (a no-break space before the symbol). Every function takes
``locale``, a tag of ``preferences.locales.LOCALES``; without it, the locale active for the
request (``preferences.middleware.LocaleMiddleware``) or the rendering (``locales.override``: the
live rows, the mails) is used, ``en-US`` when none is. An unknown tag is written as ``en-US``.

Anything that is not a finite number (text an LLM wrote, nothing) is returned as text, never
raised on: callers show it as it is, and templates escape it.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from babel.numbers import format_currency, format_decimal

from ...preferences.locales import babel_locale, current_locale

__all__ = ["humanize", "money", "number", "one_line"]

_CENT = Decimal("0.01")


def _decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        amount = Decimal(str(value).strip())
    except (InvalidOperation, ValueError):
        return None
    return amount if amount.is_finite() else None


def money(value: Any, currency: str = "USD", locale: str | None = None) -> str:
    """An amount as money, rounded half up to the cent: ``250.0`` → ``$250.00``, ``1234.5`` →
    ``$1,234.50``, ``-5`` → ``-$5.00`` (``de-DE``: ``1.234,50 $``). ``currency`` is an ISO 4217
    code. None → ``""``; not a number → ``str(value)``."""
    amount = _decimal(value)
    if amount is None:
        return "" if value is None else str(value)
    rounded = amount.quantize(_CENT, rounding=ROUND_HALF_UP)
    return format_currency(rounded, currency, locale=babel_locale(locale or current_locale()))


def number(value: Any, locale: str | None = None) -> str:
    """A number without needless decimals, grouped as the locale groups: ``249.0`` → ``249``,
    ``12500`` → ``12,500`` (``de-DE``: ``12.500``), ``0.25`` → ``0.25``. Booleans read
    ``yes``/``no``; None → ``""``; text as it is."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    amount = _decimal(value) if isinstance(value, int | float) else None
    if amount is None:
        return "" if value is None else str(value)
    shown = amount.normalize() if amount == amount.to_integral_value() else amount
    return format_decimal(shown, locale=babel_locale(locale or current_locale()), decimal_quantization=False)


def humanize(name: str) -> str:
    """A machine name as words: ``submit_refund`` → ``Submit refund``, ``orderId`` → ``Order id``."""
    words: list[str] = []
    for part in str(name).replace("-", "_").split("_"):
        current = ""
        for char in part:
            if char.isupper() and current and not current[-1].isupper():
                words.append(current)
                current = ""
            current += char
        if current:
            words.append(current)
    text = " ".join(w.lower() for w in words)
    return text[:1].upper() + text[1:]


_BREAKING_SPACE = re.compile(r"[^\S\u00a0\u202f]+")
"""Any run of whitespace but the no-break spaces money keeps between amount and symbol."""


def one_line(text: Any, limit: int = 200) -> str:
    """``text`` on one line (whitespace collapsed, no-break spaces kept), cut to ``limit``
    characters with "…"."""
    flat = _BREAKING_SPACE.sub(" ", str(text or "")).strip(" ")
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
