"""Once ``serve`` is stopping, a new request is refused 503 ``stopping`` before anything of it
runs (``in_flight.InFlightMiddleware``): Daphne cancels the requests left when the drain ends, so
a view started after it would read a body Django had already closed (a traceback, a 500;
tests/console/test_serve_shutdown.py found it now and then)."""

from __future__ import annotations

import pytest
from django.test import Client

from reviewconsole import in_flight

pytestmark = pytest.mark.django_db


@pytest.fixture
def stopping(monkeypatch):
    monkeypatch.setattr(in_flight, "_stopping", True)


def test_a_request_while_serve_stops_is_refused_503_and_its_view_never_runs(stopping, monkeypatch):
    from reviewconsole.api import auth

    looked = []
    monkeypatch.setattr(auth, "client_for_request", lambda request: looked.append(request))
    response = Client().post("/api/v1/sessions", "{}", content_type="application/json")

    assert response.status_code == 503
    assert response.json()["error"]["code"] == "stopping"
    assert response["Retry-After"] == "5"
    assert looked == []
    assert in_flight.in_flight() == 0


def test_a_request_before_serve_stops_is_counted_while_it_runs():
    seen = []

    def view_count(request):
        seen.append(in_flight.in_flight())
        from django.http import HttpResponse

        return HttpResponse("ok")

    middleware = in_flight.InFlightMiddleware(view_count)
    assert middleware(object()).status_code == 200  # type: ignore[arg-type]
    assert seen == [1] and in_flight.in_flight() == 0
