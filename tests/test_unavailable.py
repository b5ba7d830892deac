"""Database outages and lock waits: 503 / 409 with Retry-After and a short message, never a 500."""

from __future__ import annotations

import psycopg
import psycopg.errors
import pytest
from django.db import InterfaceError, OperationalError, ProgrammingError
from django.test import RequestFactory

from reviewconsole.inbox.models import Item
from reviewconsole.unavailable import classify, server_error
from tests.conftest import post_webhook


def wrapped(cause: Exception) -> OperationalError:
    """An ``OperationalError`` as Django raises it: the driver's exception as its cause."""
    error = OperationalError(str(cause))
    error.__cause__ = cause
    return error


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (wrapped(psycopg.errors.LockNotAvailable("canceling statement due to lock timeout")), "busy"),
        (wrapped(psycopg.errors.DeadlockDetected("deadlock detected")), "busy"),
        (wrapped(psycopg.errors.SerializationFailure("could not serialize")), "busy"),
        (wrapped(psycopg.OperationalError("connection failed: Connection refused")), "database_unavailable"),
        (wrapped(psycopg.errors.AdminShutdown("terminating connection (admin)")), "database_unavailable"),
        (wrapped(psycopg.errors.CannotConnectNow("the database system is starting up")), "database_unavailable"),
        (InterfaceError("connection already closed"), "database_unavailable"),
        (OperationalError("database is locked"), "busy"),
        (OperationalError("no such column: x"), None),
        (ProgrammingError("syntax error"), None),
        (ValueError("a bug"), None),
    ],
)
def test_it_classifies_database_errors(error, kind):
    assert classify(error) == kind


def test_a_webhook_during_an_outage_gets_a_json_503(demo, client, monkeypatch):
    def down(**kwargs):
        raise wrapped(psycopg.OperationalError("connection failed"))

    monkeypatch.setattr("reviewconsole.hooks.views.webhook_receive", down)
    response = post_webhook(client, {"complaint": "battery"})
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json() == {
        "error": {
            "code": "database_unavailable",
            "message": "The service is briefly unavailable. Nothing was saved; try again shortly.",
        }
    }


def test_a_decision_on_a_locked_item_gets_a_409_busy_page(start_review, client, manager, monkeypatch):
    _, interrupt = start_review()
    client.force_login(manager)

    def locked(**kwargs):
        raise wrapped(psycopg.errors.LockNotAvailable("canceling statement due to lock timeout"))

    monkeypatch.setattr("reviewconsole.inbox.pages.item_views.interrupt_decide", locked)
    response = client.post(f"/inbox/items/{interrupt.pk}/decide/", {"action": "approve"})
    assert response.status_code == 409
    assert response["Retry-After"] == "1"
    assert b"busy" in response.content and b"Traceback" not in response.content
    assert Item.objects.get(pk=interrupt.pk).status == "pending"


def test_an_outage_outside_a_view_is_a_503_and_other_errors_stay_500():
    request = RequestFactory().get("/inbox/")
    try:
        raise wrapped(psycopg.OperationalError("server closed the connection unexpectedly"))
    except OperationalError:
        response = server_error(request)
    assert response.status_code == 503
    assert b"briefly unavailable" in response.content
    try:
        raise ValueError("a bug")
    except ValueError:
        response = server_error(request)
    assert response.status_code == 500
