"""Serving the workflow picture: is the ``mermaid`` script there, and the CSP it needs.

``mermaid`` comes from npm (``package.json``; ``npm ci`` puts it in ``node_modules/``) and is
served under ``static/vendor/mermaid/`` (``STATICFILES_DIRS``). Without it, pages show the
picture's text and the path as a list. Mermaid draws SVG with inline styles, so the pages that
show a picture allow inline *styles* (never inline scripts) in their Content-Security-Policy.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django import forms
from django.conf import settings
from django.contrib.staticfiles import finders
from django.http import HttpRequest, HttpResponse

from engine import SessionStatus

from .graph import Picture, picture_for_session, tool_runs

__all__ = [
    "MERMAID_STATIC",
    "allow_picture_styles",
    "mermaid_available",
    "picture_csp",
    "picture_media",
    "session_picture",
]

MERMAID_STATIC = "vendor/mermaid/mermaid.min.js"


@functools.cache
def mermaid_available() -> bool:
    """Whether ``npm ci`` installed the mermaid script where static files find it."""
    return finders.find(MERMAID_STATIC) is not None


def session_picture(session: Any) -> Picture | None:
    """The picture of a ``WorkflowSession``: its graph, the path its events took (the nodes and
    the tools that ran), where it waits, and whether it ended."""
    rows = list(session.events.order_by("seq").values_list("node_path", "data"))
    waiting = list(session.items.filter(status="pending").values_list("node_path", "function_name"))
    tools = tool_runs(data for _, data in rows)
    ended = session.status in SessionStatus.CLOSED
    return picture_for_session(session.workflow, [path for path, _ in rows], waiting, tools, ended=ended)


def picture_media() -> forms.Media:
    """The scripts that draw a picture (the admin's session page adds these to its media)."""
    scripts = [MERMAID_STATIC] if mermaid_available() else []
    return forms.Media(js=[*scripts, "console/picture.js"])


def picture_csp() -> dict[str, Any] | None:
    """The site's CSP with inline styles allowed (None when the site sends no CSP)."""
    policy = getattr(settings, "SECURE_CSP", None)
    if not policy:
        return None
    styles = list(policy.get("style-src", policy.get("default-src", ["'self'"])))
    if "'unsafe-inline'" not in styles:
        styles.append("'unsafe-inline'")
    return {**policy, "style-src": styles}


def allow_picture_styles(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Let ``view``'s pages draw the picture (see the module docstring)."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = view(request, *args, **kwargs)
        policy = picture_csp()
        if policy is not None:
            response._csp_config = policy  # type: ignore[attr-defined]  # what django's csp_override sets
        return response

    return wrapped
