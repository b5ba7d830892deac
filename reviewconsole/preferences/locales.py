"""The locales money and numbers are written in, and the one active for the current reader.

A locale is a BCP 47 tag from :data:`LOCALES` (``en-US``, ``de-DE``): the reader's pick on the
preferences page, else their browser's (the best match of its ``Accept-Language``), else
:data:`DEFAULT_LOCALE`. ``middleware.LocaleMiddleware`` activates it for a request; code without a
request (the live rows pushed to a socket, a mail) wraps its rendering in :func:`override` with the
reader's. :func:`current_locale` is what ``inbox/pages/formats.py`` formats with (Babel).

Only numbers and money follow the locale: the console's words stay English and its times keep their
``YYYY-MM-DD HH:MM`` form (``times.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

from asgiref.local import Local
from babel import Locale
from babel.numbers import format_currency

__all__ = [
    "DEFAULT_LOCALE",
    "LOCALES",
    "activate",
    "babel_locale",
    "current_locale",
    "deactivate",
    "is_locale",
    "locale_choices",
    "negotiate",
    "override",
]

DEFAULT_LOCALE = "en-US"
LOCALES: tuple[str, ...] = (
    "en-US",
    "en-GB",
    "de-DE",
    "de-CH",
    "fr-FR",
    "es-ES",
    "it-IT",
    "nl-NL",
    "pt-BR",
    "pl-PL",
    "sv-SE",
    "ja-JP",
    "hi-IN",
)
"""The locales a person may pick (the preferences page's list, in this order)."""

_active = Local()


def is_locale(tag: str) -> bool:
    """Whether ``tag`` is one of :data:`LOCALES` (exactly as written there)."""
    return tag in LOCALES


@cache
def babel_locale(tag: str) -> Locale:
    """Babel's ``Locale`` of ``tag`` (one of :data:`LOCALES`; anything else: the default's)."""
    return Locale.parse(tag if is_locale(tag) else DEFAULT_LOCALE, sep="-")


@cache
def locale_choices() -> tuple[tuple[str, str], ...]:
    """``(tag, label)`` per locale, the label in its own language with an example amount:
    ``("de-DE", "Deutsch (Deutschland) — 1.250,00 $")``."""
    choices = []
    for tag in LOCALES:
        locale = babel_locale(tag)
        choices.append((tag, f"{locale.get_display_name(locale)} — {format_currency(1250, 'USD', locale=locale)}"))
    return tuple(choices)


def _ranked(accept_language: str) -> list[str]:
    """The tags of an ``Accept-Language`` header, most wanted first (``q=0`` and ``*`` left out)."""
    ranked: list[tuple[float, int, str]] = []
    for index, part in enumerate(accept_language.split(",")[:32]):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        tag = tag.strip().replace("_", "-")
        if tag and tag != "*" and quality > 0:
            ranked.append((-quality, index, tag))
    return [tag for _, _, tag in sorted(ranked)]


def negotiate(accept_language: str) -> str:
    """The locale of :data:`LOCALES` that best fits an ``Accept-Language`` header, or "" for none.

    Per wanted tag, best first: the same tag (any case: ``de-de`` → ``de-DE``), else the first
    locale of its language (``de`` or ``de-AT`` → ``de-DE``).
    """
    by_lower = {tag.lower(): tag for tag in LOCALES}
    for wanted in _ranked(accept_language):
        exact = by_lower.get(wanted.lower())
        if exact:
            return exact
        language = wanted.split("-")[0].lower()
        same = next((tag for tag in LOCALES if tag.split("-")[0].lower() == language), "")
        if same:
            return same
    return ""


def activate(tag: str) -> None:
    """Make ``tag`` the current locale of this thread or task (unknown tags: the default)."""
    _active.value = tag if is_locale(tag) else DEFAULT_LOCALE


def deactivate() -> None:
    """Back to :data:`DEFAULT_LOCALE`."""
    if hasattr(_active, "value"):
        del _active.value


def current_locale() -> str:
    """The active locale (:func:`activate`, :func:`override`), else :data:`DEFAULT_LOCALE`."""
    return getattr(_active, "value", DEFAULT_LOCALE)


@contextmanager
def override(tag: str) -> Iterator[str]:
    """``with override("de-DE"):`` formats in ``tag`` inside, then restores the locale before."""
    before = getattr(_active, "value", None)
    activate(tag)
    try:
        yield current_locale()
    finally:
        if before is None:
            deactivate()
        else:
            _active.value = before
