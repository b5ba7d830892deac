"""``manage.py serve``: the links in notification emails point at the address it serves."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from reviewconsole.inbox.conf import inbox_setting
from reviewconsole.inbox.notifications import item_url


class FakeServer:
    """Daphne's ``Server``, not listening: ``run`` returns at once."""

    def __init__(self, **kwargs):
        self.kwargs = kwargs

    def run(self):
        pass


@pytest.fixture
def serve(monkeypatch, settings):
    """``serve(*args)`` runs the command without Daphne; no BASE_URL set, environment restored after."""
    import daphne.server

    monkeypatch.setattr(daphne.server, "Server", FakeServer)
    monkeypatch.setenv("REVIEWCONSOLE_BASE_URL", "")
    monkeypatch.delenv("REVIEWCONSOLE_BASE_URL")  # restored to unset afterwards
    settings.REVIEWCONSOLE = {k: v for k, v in settings.REVIEWCONSOLE.items() if k != "BASE_URL"}
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS]  # serve appends its host: to a copy

    def run(*args):
        with open("/dev/null", "w") as devnull:
            call_command("serve", "--no-migrate", *args, stdout=devnull)

    return run


@pytest.mark.parametrize(
    ("args", "base"),
    [
        ([], "http://127.0.0.1:8000"),
        (["--port", "8765"], "http://127.0.0.1:8765"),
        (["--host", "::1", "--port", "8401"], "http://[::1]:8401"),
        (["--host", "0.0.0.0", "--port", "8402"], "http://127.0.0.1:8402"),
    ],
)
def test_links_use_the_served_address(serve, start_review, args, base):
    serve(*args)
    assert inbox_setting("BASE_URL") == base
    _, item = start_review()
    assert item_url(item) == f"{base}/inbox/items/{item.pk}/"


def test_a_base_url_in_the_environment_wins(serve, monkeypatch):
    monkeypatch.setenv("REVIEWCONSOLE_BASE_URL", "https://review.example.com")
    serve("--port", "8765")
    assert inbox_setting("BASE_URL") == "https://review.example.com"


def test_a_base_url_in_the_settings_wins(serve, settings):
    settings.REVIEWCONSOLE = {**settings.REVIEWCONSOLE, "BASE_URL": "https://review.example.com"}
    serve("--port", "8765")
    assert inbox_setting("BASE_URL") == "https://review.example.com"
