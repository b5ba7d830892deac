"""Shared fixtures: personas and demo data for console tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def demo(db, monkeypatch):
    """Run ``manage.py demo`` with a known password and webhook secret; returns them."""
    from django.core.management import call_command

    password = "test-pass-1234"
    secret = "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
    monkeypatch.setenv("DEMO_PASSWORD", password)
    monkeypatch.setenv("DEMO_WEBHOOK_SECRET", secret)
    call_command("demo", stdout=open("/dev/null", "w"))  # noqa: SIM115
    return {"password": password, "secret": secret}
