"""Static files for ``serve``: Django's ASGI static handler, refusing a path that leaves the static
directories with a 400 (Django's answer to a suspicious operation) instead of a 500.

``ASGIStaticFilesHandler`` turns only ``Http404`` into a response; a path such as
``/static/..%2f..%2fvar%2fsecret_key`` makes the finders raise ``SuspiciousFileOperation``
(nothing is read: ``safe_join`` refuses it first), which became an unhandled 500.
"""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.exceptions import SuspiciousOperation
from django.core.handlers.exception import response_for_exception
from django.http import HttpRequest, HttpResponseBase

__all__ = ["StaticFilesHandler"]


class StaticFilesHandler(ASGIStaticFilesHandler):
    """``ASGIStaticFilesHandler`` answering a traversal attempt 400 (see the module docstring)."""

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        try:
            return await super().get_response_async(request)
        except SuspiciousOperation as exc:
            return await sync_to_async(response_for_exception, thread_sensitive=False)(request, exc)
