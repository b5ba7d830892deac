"""Numbers and words as people read them, for titles, summaries and the item page.

The console formats in US English (``en-US``, the site's ``LANGUAGE_CODE``): Babel is not
installed and the preferences app keeps no locale, only a time zone. :data:`LOCALES` holds the
separators of the locales this module knows; every function takes ``locale`` so a caller with a
person's locale can pass it, and an unknown one falls back to ``en-US``.

Anything that is not a finite number (text an LLM wrote, nothing) is returned as text, never
raised on: callers show it as it is, and templates escape it.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

__all__ = ["DEFAULT_LOCALE", "LOCALES", "humanize", "money", "number", "one_line"]

DEFAULT_LOCALE = "en-US"
LOCALES: dict[str, tuple[str, str, str]] = {
    # locale: (thousands separator, decimal mark, money pattern with {sign}, {amount}, {symbol})
    "en-US": (",", ".", "{sign}{symbol}{amount}"),
    "en-GB": (",", ".", "{sign}{symbol}{amount}"),
    "de-DE": (".", ",", "{sign}{amount}\u00a0{symbol}"),
    "fr-FR": ("\u202f", ",", "{sign}{amount}\u00a0{symbol}"),
}
_SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£"}


def _decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        amount = Decimal(str(value).strip())
    except (InvalidOperation, ValueError):
        return None
    return amount if amount.is_finite() else None


def _grouped(amount: Decimal, places: int | None, locale: str) -> str:
    """``abs(amount)`` with the locale's separators; ``places`` decimals (None: as few as it needs)."""
    thousands, mark, _ = LOCALES.get(locale, LOCALES[DEFAULT_LOCALE])
    amount = abs(amount)
    if places is not None:
        amount = amount.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
        text = f"{amount:,.{places}f}"
    else:
        text = f"{amount.normalize():,f}"
        text = text.rstrip("0").rstrip(".") if "." in text else text
    return text.replace(",", "\0").replace(".", mark).replace("\0", thousands)


def money(value: Any, currency: str = "USD", locale: str = DEFAULT_LOCALE) -> str:
    """An amount as money: ``250.0`` → ``$250.00``, ``1234.5`` → ``$1,234.50``, ``-5`` → ``-$5.00``
    (``de-DE``: ``1.234,50 $``). None → ``""``; not a number → ``str(value)``."""
    amount = _decimal(value)
    if amount is None:
        return "" if value is None else str(value)
    pattern = LOCALES.get(locale, LOCALES[DEFAULT_LOCALE])[2]
    sign = "-" if amount < 0 else ""
    symbol = _SYMBOLS.get(currency, currency)
    return pattern.format(sign=sign, symbol=symbol, amount=_grouped(amount, 2, locale))


def number(value: Any, locale: str = DEFAULT_LOCALE) -> str:
    """A number without needless decimals: ``249.0`` → ``249``, ``12500`` → ``12,500``,
    ``0.25`` → ``0.25``. Booleans read ``yes``/``no``; None → ``""``; text as it is."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    amount = _decimal(value) if isinstance(value, int | float) else None
    if amount is None:
        return "" if value is None else str(value)
    sign = "-" if amount < 0 else ""
    return sign + _grouped(amount, None, locale)


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


def one_line(text: Any, limit: int = 200) -> str:
    """``text`` on one line (whitespace collapsed), cut to ``limit`` characters with "…"."""
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
