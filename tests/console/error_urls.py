"""The console's URLs plus views that fail, for the error-page tests (``ROOT_URLCONF`` override)."""

from django.core.exceptions import PermissionDenied, SuspiciousOperation
from django.urls import path

from reviewconsole.urls import handler400, handler403, handler404, handler500, urlpatterns  # noqa: F401

SECRET_DETAIL = "db password is hunter2 at /srv/secret/path.py"


def forbidden(request):
    raise PermissionDenied(SECRET_DETAIL)


def bad(request):
    raise SuspiciousOperation(SECRET_DETAIL)


def broken(request):
    raise RuntimeError(SECRET_DETAIL)


urlpatterns = [
    path("fails/forbidden/", forbidden),
    path("fails/bad/", bad),
    path("fails/broken/", broken),
    path("hooks/fails/broken/", broken),
    *urlpatterns,
]
