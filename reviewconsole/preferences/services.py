"""Reading and saving a person's preferences.

A request reads them from its session (``SESSION_KEY``: ``{"time_zone", "time_zone_chosen",
"locale", "locale_chosen", "theme"}``), filled from the :class:`~.models.Preference` row the
first time a session needs them, and rewritten whenever this session saves a change. So a page
costs no query for them; another browser of the same person picks up a change at its next login.
Code without a request reads the saved locale itself (:func:`locale_of`, :func:`locales_of`).
"""

from __future__ import annotations

import zoneinfo
from functools import cache
from typing import Any, TypedDict

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.http import HttpRequest

from .locales import DEFAULT_LOCALE, is_locale
from .models import Preference, Theme

__all__ = [
    "REGION_AREAS",
    "SESSION_KEY",
    "PreferenceError",
    "Shown",
    "is_zone",
    "locale_of",
    "locale_reported",
    "locales_of",
    "reader_locale",
    "save_preference",
    "shown",
    "zone_reported",
    "zones",
]

SESSION_KEY = "console_preferences"


class Shown(TypedDict):
    """What pages need of the preferences: the zone's IANA name ("" means UTC, not known yet),
    whether the person picked it, the locale's tag ("": not known yet) and whether they picked
    it, and the theme (a :class:`Theme` value)."""

    time_zone: str
    time_zone_chosen: bool
    locale: str
    locale_chosen: bool
    theme: str


DEFAULT: Shown = {
    "time_zone": "",
    "time_zone_chosen": False,
    "locale": "",
    "locale_chosen": False,
    "theme": Theme.AUTO.value,
}


class PreferenceError(ValueError):
    """A value that is not one of its preference's: ``field`` names it (``time_zone``,
    ``locale``, ``theme``), the message says why, for people."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


REGION_AREAS = (
    "Africa",
    "America",
    "Antarctica",
    "Arctic",
    "Asia",
    "Atlantic",
    "Australia",
    "Europe",
    "Indian",
    "Pacific",
)
"""The IANA areas of region zones (``Europe/Berlin``); ``Etc/…``, ``Factory``, ``localtime``,
``posixrules`` and the old names without an area (``CET``, ``Japan``) are not offered."""


@cache
def zones() -> tuple[str, ...]:
    """The IANA region zones this system knows (``Area/Location``, :data:`REGION_AREAS`) and
    ``UTC``, sorted (from ``zoneinfo.available_timezones``)."""
    regions = (name for name in zoneinfo.available_timezones() if "/" in name and name.split("/")[0] in REGION_AREAS)
    return tuple(sorted([*regions, "UTC"]))


def is_zone(name: str) -> bool:
    return name in set(zones())


def _as_shown(row: Preference | None) -> Shown:
    if row is None:
        return dict(DEFAULT)  # type: ignore[return-value]
    return {
        "time_zone": row.time_zone,
        "time_zone_chosen": row.time_zone_chosen,
        "locale": row.locale,
        "locale_chosen": row.locale_chosen,
        "theme": row.theme,
    }


def _user(request: HttpRequest) -> AbstractBaseUser | AnonymousUser | None:
    return getattr(request, "user", None)


def shown(request: HttpRequest) -> Shown:
    """The preferences of the request's person (the defaults for someone not logged in)."""
    session = getattr(request, "session", None)
    if session is None:
        return dict(DEFAULT)  # type: ignore[return-value]
    kept: Any = session.get(SESSION_KEY)
    if isinstance(kept, dict) and set(kept) == set(DEFAULT):
        return kept  # type: ignore[return-value]
    user = _user(request)
    if user is None or not user.is_authenticated:
        return dict(DEFAULT)  # type: ignore[return-value]
    found = _as_shown(Preference.objects.filter(user_id=user.pk).first())
    session[SESSION_KEY] = found
    return found


def save_preference(
    request: HttpRequest,
    *,
    time_zone: str | None = None,
    chosen: bool = True,
    locale: str | None = None,
    locale_chosen: bool = True,
    theme: str | None = None,
) -> Shown:
    """Save the logged-in person's zone (``chosen``: picked by them; "" for not known yet),
    locale (``locale_chosen`` likewise) and/or theme, all or nothing; returns what now holds.

    Raises:
        PreferenceError: ``time_zone`` is not a region zone (:func:`zones`), ``locale`` not one of
            ``locales.LOCALES`` or ``theme`` not a :class:`Theme` value; nothing is saved.
        PermissionError: nobody is logged in.
    """
    user = _user(request)
    if user is None or not user.is_authenticated:
        raise PermissionError("Log in to save preferences.")
    if time_zone and not is_zone(time_zone):
        if time_zone in zoneinfo.available_timezones():
            raise PreferenceError(
                "time_zone", f"Not a region's time zone: {time_zone[:64]} (pick one such as Europe/Berlin)"
            )
        raise PreferenceError("time_zone", f"Unknown time zone: {time_zone[:64]}")
    if locale and not is_locale(locale):
        raise PreferenceError("locale", f"Unknown locale: {locale[:64]} (pick one of the list, such as de-DE)")
    if theme is not None and theme not in Theme.values:
        raise PreferenceError("theme", "Unknown theme (auto, light or dark)")
    with transaction.atomic():
        row, _ = Preference.objects.select_for_update().get_or_create(user_id=user.pk)
        if time_zone is not None:
            row.time_zone, row.time_zone_chosen = time_zone, chosen
        if locale is not None:
            row.locale, row.locale_chosen = locale, locale_chosen
        if theme is not None:
            row.theme = theme
        row.save()
    request.session[SESSION_KEY] = _as_shown(row)
    return _as_shown(row)


def zone_reported(request: HttpRequest, name: str) -> bool:
    """The person's browser says it is in zone ``name``: keep it unless they picked a zone.

    Returns whether it was saved (False: they picked one, or it is already the zone). An unknown
    name is ignored (False): a browser's report is a hint, never an error to show.
    """
    if not is_zone(name):
        return False
    current = shown(request)
    if current["time_zone_chosen"] or current["time_zone"] == name:
        return False
    save_preference(request, time_zone=name, chosen=False)
    return True


def locale_reported(request: HttpRequest, tag: str) -> bool:
    """The person's browser asks for locale ``tag`` (its ``Accept-Language``, negotiated): keep it
    unless they picked one. Returns whether it was saved; "" or an unknown tag is ignored (False).
    """
    user = _user(request)
    if not is_locale(tag) or user is None or not user.is_authenticated:
        return False
    current = shown(request)
    if current["locale_chosen"] or current["locale"] == tag:
        return False
    save_preference(request, locale=tag, locale_chosen=False)
    return True


def reader_locale(kept: Shown) -> str:
    """The locale to write for a person with these preferences: theirs, else the default."""
    return kept["locale"] if is_locale(kept["locale"]) else DEFAULT_LOCALE


def locale_of(user_id: int | None) -> str:
    """The saved locale of a person (one query), else ``DEFAULT_LOCALE``: for a socket or a mail."""
    tag = Preference.objects.filter(user_id=user_id).values_list("locale", flat=True).first() or ""
    return tag if is_locale(tag) else DEFAULT_LOCALE


def locales_of(user_ids: list[int]) -> dict[int, str]:
    """``{user_id: locale}`` of these people in one query (``DEFAULT_LOCALE`` for those without)."""
    saved = dict(Preference.objects.filter(user_id__in=user_ids).values_list("user_id", "locale"))
    return {pk: saved[pk] if is_locale(saved.get(pk, "")) else DEFAULT_LOCALE for pk in user_ids}
