"""Errors to outsiders are generic; the details go to the server log."""

from __future__ import annotations

import logging

import pytest

SECRET_DETAIL = "db password is hunter2 at /srv/secret/path.py"


def test_an_api_bug_answers_a_generic_500_and_logs_the_details(client, demo, monkeypatch, caplog):
    from reviewconsole.api import views
    from tests.api.conftest import auth, make_api_client

    _, token = make_api_client()

    def boom(*args, **kwargs):
        raise RuntimeError(SECRET_DETAIL)

    monkeypatch.setattr(views, "interrupts_for", boom)
    with caplog.at_level(logging.ERROR, logger="reviewconsole.api"):
        response = client.get("/api/v1/interrupts", headers=auth(token))
    assert response.status_code == 500
    assert response.json() == {
        "error": {"code": "internal_error", "message": "Something went wrong on our side; it has been logged."}
    }
    assert b"hunter2" not in response.content
    assert b"Traceback" not in response.content
    assert SECRET_DETAIL in caplog.text


@pytest.mark.parametrize("path", ["/api/sessions/x/"])
def test_a_page_bug_answers_djangos_plain_500(client, auditor, monkeypatch, path):
    from reviewconsole.console import views

    def boom(*args, **kwargs):
        raise RuntimeError(SECRET_DETAIL)

    monkeypatch.setattr(views, "get_object_or_404", boom)
    client.raise_request_exception = False
    client.force_login(auditor)
    response = client.get(path)
    assert response.status_code == 500
    assert b"hunter2" not in response.content
    assert b"Traceback" not in response.content
    assert b"RuntimeError" not in response.content


def test_a_page_bug_is_logged_with_its_traceback_on_the_console_with_debug_off(client, auditor, monkeypatch, settings):
    """Django's own console handler logs only with DEBUG on; ours (stderr) logs every 500."""
    import io

    from reviewconsole.console import views

    def boom(*args, **kwargs):
        raise RuntimeError(SECRET_DETAIL)

    settings.DEBUG = False
    monkeypatch.setattr(views, "get_object_or_404", boom)
    client.raise_request_exception = False
    client.force_login(auditor)
    [console] = [h for h in logging.getLogger("django.request").handlers if h.name == "console"]
    log = io.StringIO()
    stderr = console.setStream(log)
    try:
        response = client.get("/api/sessions/x/")
    finally:
        console.setStream(stderr)
    assert response.status_code == 500
    assert b"hunter2" not in response.content
    written = log.getvalue()
    assert "ERROR django.request: Internal Server Error: /api/sessions/x/" in written
    assert "Traceback (most recent call last)" in written
    assert f"RuntimeError: {SECRET_DETAIL}" in written


def test_an_unknown_api_path_is_a_json_404(client, demo):
    response = client.get("/api/v1/no/such/thing")
    assert response.status_code == 404
