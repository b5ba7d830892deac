"""The preferences page and the two small POSTs the pages send.

| URL | what |
|---|---|
| ``GET /preferences/`` | the person's time zone, locale and theme, as a form |
| ``POST /preferences/`` | save the fields posted, others left as they are (400: the form again with the reason) |
| ``POST /preferences/time-zone/`` | ``time_zone``: the browser's zone, kept unless the person picked one; 204 |
| ``POST /preferences/theme/`` | ``theme``: the toggle in the top bar; 204 for a script, else 302 back |

All need a login and the CSRF token. A JSON caller (``Accept: application/json``) of the first two
POSTs gets ``400 invalid_request`` for a value that is not a region zone, a locale of the list or a
theme (``errors``: ``[{"path": [field], "message"}]`` for the form), and 204 once saved; the
browser's zone report ignores an unknown zone (204: it is a hint). A body that is not a form is
``415 unsupported_media_type``; nothing is saved on any refusal.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods, require_POST

from ..json_errors import error_response
from .locales import is_locale, locale_choices
from .models import Theme
from .services import PreferenceError, is_zone, save_preference, shown, zone_reported, zones


def _back(request: HttpRequest, fallback: str) -> str:
    target = request.POST.get("next") or request.headers.get("Referer", "")
    if url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return target
    return fallback


_FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


def _wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


@login_required
@require_http_methods(["GET", "POST"])
def preferences_page(request: HttpRequest) -> HttpResponse:
    """Pick a time zone and a locale (or keep the browser's) and a theme."""
    current = shown(request)
    status, error = 200, ""
    if request.method == "POST":
        if request.content_type not in _FORMS:
            return error_response(
                415, "unsupported_media_type", "Send the preferences as a form (application/x-www-form-urlencoded)."
            )
        zone = request.POST.get("time_zone", "").strip()
        locale = request.POST.get("locale", "").strip()
        try:
            save_preference(  # a field left out of the post is left as it is
                request,
                # "" ("as this browser"): kept as the browser last said, and its next report sets it
                time_zone=(zone or (current["time_zone"] if is_zone(current["time_zone"]) else ""))
                if "time_zone" in request.POST
                else None,
                chosen=bool(zone),
                locale=(locale or (current["locale"] if is_locale(current["locale"]) else ""))
                if "locale" in request.POST
                else None,
                locale_chosen=bool(locale),
                theme=request.POST.get("theme"),
            )
        except PreferenceError as exc:
            if _wants_json(request):
                errors = [{"path": [exc.field], "message": str(exc)}]
                return error_response(400, "invalid_request", f"{exc}; nothing was saved.", errors=errors)
            status, error = 400, f"{exc}; nothing was saved."
        else:
            if _wants_json(request):
                return HttpResponse(status=204)
            messages.success(request, "Preferences saved.")
            return redirect("preferences")
    return render(
        request,
        "preferences/preferences.html",
        {
            "zones": zones(),
            "locales": locale_choices(),
            "themes": Theme.choices,
            "current": shown(request),
            "error": error,
            "posted_zone": request.POST.get("time_zone", "") if error else None,
            "posted_locale": request.POST.get("locale", "") if error else None,
        },
        status=status,
    )


@login_required
@require_POST
def time_zone_reported(request: HttpRequest) -> HttpResponse:
    """The browser's zone (``time_zone``, from ``Intl.DateTimeFormat``): 204 whether kept or not."""
    zone_reported(request, request.POST.get("time_zone", "").strip()[:64])
    return HttpResponse(status=204)


@login_required
@require_POST
def theme(request: HttpRequest) -> HttpResponse:
    """Save the theme (``theme``: auto, light or dark)."""
    try:
        save_preference(request, theme=request.POST.get("theme", ""))
    except ValueError:
        if _wants_json(request):
            return error_response(400, "invalid_request", "The theme is auto, light or dark.")
        messages.error(request, "The theme is auto, light or dark; nothing was saved.")
    if _wants_json(request) or request.headers.get("X-Requested-With") == "fetch":
        return HttpResponse(status=204)
    return redirect(_back(request, "/inbox/"))
