"""One row per person who changed a preference (or whose browser told us its time zone)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Theme(models.TextChoices):
    """The console's colours: the device's choice (``prefers-color-scheme``), or always light or dark.

    The values are those of Django admin's own theme switch (``localStorage["theme"]``), so the
    console and the admin follow one choice."""

    AUTO = "auto", "As the device (light or dark)"
    LIGHT = "light", "Light"
    DARK = "dark", "Dark"


class Preference(models.Model):
    """A person's time zone, locale and theme.

    ``time_zone`` is an IANA name (``Europe/Berlin``); empty until the person's browser reports
    one (the login form and every page send ``Intl.DateTimeFormat().resolvedOptions().timeZone``)
    or the person picks one. ``time_zone_chosen`` says the person picked it on the preferences
    page: a browser's report then no longer replaces it.

    ``locale`` is a BCP 47 tag of ``locales.LOCALES`` (``de-DE``): how money and numbers are
    written for the person (pages, live rows, mails). Empty until their browser's
    ``Accept-Language`` names one the console knows or they pick one; ``locale_chosen`` as for
    the zone.
    """

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preference")
    time_zone = models.CharField(max_length=64, blank=True, help_text="IANA time zone, e.g. Europe/Berlin.")
    time_zone_chosen = models.BooleanField(
        default=False, help_text="Picked by the person (else reported by their browser, which may update it)."
    )
    locale = models.CharField(max_length=16, blank=True, help_text="BCP 47 locale of numbers and money, e.g. de-DE.")
    locale_chosen = models.BooleanField(
        default=False, help_text="Picked by the person (else their browser's Accept-Language, which may update it)."
    )
    theme = models.CharField(max_length=10, choices=Theme.choices, default=Theme.AUTO)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.user_id}: {self.time_zone or 'UTC'}, {self.locale or 'default locale'}, {self.theme}"
