"""Reading and saving a person's preferences.

A request reads them from its session (``SESSION_KEY``: ``{"time_zone", "time_zone_chosen",
"theme"}``), filled from the :class:`~.models.Preference` row the first time a session needs
them, and rewritten whenever this session saves a change. So a page costs no query for them;
another browser of the same person picks up a change at its next login.
"""

from __future__ import annotations

import zoneinfo
from functools import cache
from typing import Any, TypedDict

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.http import HttpRequest

from .models import Preference, Theme

__all__ = ["SESSION_KEY", "Shown", "is_zone", "save_preference", "shown", "zone_reported", "zones"]

SESSION_KEY = "console_preferences"


class Shown(TypedDict):
    """What pages need of the preferences: the zone's IANA name ("" means UTC, not known yet),
    whether the person picked it, and the theme (a :class:`Theme` value)."""

    time_zone: str
    time_zone_chosen: bool
    theme: str


DEFAULT: Shown = {"time_zone": "", "time_zone_chosen": False, "theme": Theme.AUTO.value}


@cache
def zones() -> tuple[str, ...]:
    """Every IANA zone name this system knows, sorted (``zoneinfo.available_timezones``)."""
    return tuple(sorted(zoneinfo.available_timezones()))


def is_zone(name: str) -> bool:
    return name in set(zones())


def _as_shown(row: Preference | None) -> Shown:
    if row is None:
        return dict(DEFAULT)  # type: ignore[return-value]
    return {"time_zone": row.time_zone, "time_zone_chosen": row.time_zone_chosen, "theme": row.theme}


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
    request: HttpRequest, *, time_zone: str | None = None, chosen: bool = True, theme: str | None = None
) -> Shown:
    """Save the logged-in person's zone (``chosen``: picked by them; "" for not known yet) and/or
    theme; returns what now holds.

    Raises:
        ValueError: ``time_zone`` is not an IANA zone name or ``theme`` not a :class:`Theme` value.
        PermissionError: nobody is logged in.
    """
    user = _user(request)
    if user is None or not user.is_authenticated:
        raise PermissionError("Log in to save preferences.")
    if time_zone and not is_zone(time_zone):
        raise ValueError(f"Unknown time zone: {time_zone[:64]}")
    if theme is not None and theme not in Theme.values:
        raise ValueError("Unknown theme.")
    with transaction.atomic():
        row, _ = Preference.objects.select_for_update().get_or_create(user_id=user.pk)
        if time_zone is not None:
            row.time_zone, row.time_zone_chosen = time_zone, chosen
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
