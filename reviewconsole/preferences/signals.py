"""At login, the browser's time zone (a hidden field of the login form) becomes the person's zone
unless they picked one: the first page after logging in already shows their local times."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver
from django.http import HttpRequest

from .services import SESSION_KEY, shown, zone_reported


@receiver(user_logged_in, dispatch_uid="reviewconsole.preferences.login_zone")
def login_zone(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    if request is None or not hasattr(request, "session"):
        return
    request.session.pop(SESSION_KEY, None)  # another person may have used this browser
    reported = request.POST.get("time_zone", "") if request.method == "POST" else ""
    if reported:
        zone_reported(request, reported.strip()[:64])
    else:
        shown(request)
