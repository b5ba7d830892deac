"""The favicon: an SVG in static, linked from every console page; ``/favicon.ico`` does not 404."""

from __future__ import annotations

from pathlib import Path

from django.contrib.staticfiles import finders


def test_favicon_ico_redirects_to_the_svg(client, db):
    response = client.get("/favicon.ico")
    assert (response.status_code, response["Location"]) == (302, "/static/console/favicon.svg")
    path = finders.find("console/favicon.svg")
    assert path and Path(path).read_text().startswith("<svg ")


def test_console_pages_link_the_icon(client, manager):
    link = '<link rel="icon" href="/static/console/favicon.svg" type="image/svg+xml">'
    assert link in client.get("/accounts/login/").content.decode()
    client.force_login(manager)
    assert link in client.get("/inbox/").content.decode()
