"""A database outage or a lock wait is a retryable refusal in the API's error format, never a 500."""

import pytest
from django.db import InterfaceError, OperationalError

from tests.api.conftest import auth


@pytest.mark.parametrize(
    ("error", "status", "code", "retry_after"),
    [
        (OperationalError("database is locked"), 409, "busy", "1"),
        (InterfaceError("connection already closed"), 503, "database_unavailable", "5"),
    ],
)
def test_a_database_error_is_a_retryable_refusal(client, token, monkeypatch, error, status, code, retry_after):
    from reviewconsole.api import views

    def broken(*args, **kwargs):
        raise error

    monkeypatch.setattr(views, "interrupts_for", broken)
    response = client.get("/api/v1/interrupts", headers=auth(token))
    assert response.status_code == status
    assert response.json()["error"]["code"] == code
    assert response["Retry-After"] == retry_after
    assert "locked" not in response.content.decode() and "closed" not in response.content.decode()
