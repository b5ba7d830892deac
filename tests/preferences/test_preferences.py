"""A person's time zone (their browser's, detected at login and on any page, until they pick one)
and theme: saved, applied to every page (``timezone.activate``), refused when not valid."""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import Client
from django.utils import timezone

from reviewconsole.preferences.models import Preference
from tests.conftest import DEMO_PASSWORD
from tests.inbox.factories import make_items
from tests.personas import PASSWORD


def _login(zone=""):
    client = Client()
    response = client.post("/accounts/login/", {"username": "manager", "password": DEMO_PASSWORD, "time_zone": zone})
    assert response.status_code == 302
    return client


def test_the_browsers_zone_at_login_is_the_persons_zone_from_the_first_page(manager):
    from reviewconsole.inbox.models import Queue

    make_items(Queue.objects.get(slug="support"), 1, start=timezone.now() - dt.timedelta(hours=3))
    client = _login("Asia/Tokyo")
    row = Preference.objects.get(user=manager)
    assert (row.time_zone, row.time_zone_chosen) == ("Asia/Tokyo", False)
    html = client.get("/inbox/").content.decode()
    assert 'data-time-zone="Asia/Tokyo"' in html and 'data-time-zone-chosen="0"' in html
    assert " JST (Asia/Tokyo)" in html  # the hover text of the row's times
    assert "3 h ago" in html


def test_without_a_zone_times_are_utc_and_say_so(manager):
    from reviewconsole.inbox.models import Queue

    make_items(Queue.objects.get(slug="support"), 1)
    html = _login().get("/inbox/").content.decode()
    assert not Preference.objects.filter(user=manager).exists()
    assert 'data-time-zone=""' in html
    assert ' UTC"' in html  # e.g. title="2026-01-01 10:00:00 UTC"


def test_an_unknown_zone_at_login_is_ignored(manager):
    _login("Mars/Olympus_Mons")
    assert not Preference.objects.filter(user=manager).exists()


def test_a_page_reports_the_browsers_zone_which_never_replaces_a_chosen_one(manager):
    client = _login()
    assert client.post("/preferences/time-zone/", {"time_zone": "Europe/Berlin"}).status_code == 204
    assert Preference.objects.get(user=manager).time_zone == "Europe/Berlin"
    assert "(Europe/Berlin)" in client.get("/preferences/").content.decode()
    assert client.post("/preferences/", {"time_zone": "America/New_York", "theme": "auto"}).status_code == 302
    assert client.post("/preferences/time-zone/", {"time_zone": "Europe/Paris"}).status_code == 204
    row = Preference.objects.get(user=manager)
    assert (row.time_zone, row.time_zone_chosen) == ("America/New_York", True)
    html = client.get("/preferences/").content.decode()
    assert '<option value="America/New_York" selected>' in html


def test_choosing_as_this_browser_lets_the_browser_set_it_again(manager):
    client = _login()
    client.post("/preferences/", {"time_zone": "America/New_York", "theme": "auto"})
    client.post("/preferences/", {"time_zone": "", "theme": "auto"})
    client.post("/preferences/time-zone/", {"time_zone": "Europe/Paris"})
    assert Preference.objects.get(user=manager).time_zone == "Europe/Paris"


def test_a_person_without_a_zone_may_save_a_theme_and_keep_the_browsers_zone(manager):
    client = _login()
    assert client.post("/preferences/", {"time_zone": "", "theme": "dark"}).status_code == 302
    row = Preference.objects.get(user=manager)
    assert (row.time_zone, row.time_zone_chosen, row.theme) == ("", False, "dark")


def test_a_zone_that_is_not_one_is_refused_and_nothing_is_saved(manager):
    client = _login()
    response = client.post("/preferences/", {"time_zone": "Europe/<b>Atlantis</b>", "theme": "dark"})
    assert response.status_code == 400
    html = response.content.decode()
    assert "Unknown time zone: Europe/&lt;b&gt;Atlantis&lt;/b&gt;; nothing was saved." in html
    assert not Preference.objects.filter(user=manager).exists()


def test_the_theme_is_saved_and_every_page_carries_it(manager):
    client = _login()
    assert 'data-theme="auto"' in client.get("/inbox/").content.decode()
    response = client.post("/preferences/theme/", {"theme": "dark"}, headers={"X-Requested-With": "fetch"})
    assert response.status_code == 204
    assert Preference.objects.get(user=manager).theme == "dark"
    assert 'data-theme-saved="dark"' in client.get("/inbox/").content.decode()
    refused = client.post("/preferences/theme/", {"theme": "neon"}, headers={"Accept": "application/json"})
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "invalid_request"
    assert Preference.objects.get(user=manager).theme == "dark"


def test_without_a_script_the_theme_form_goes_back_where_it_came_from(manager):
    client = _login()
    response = client.post("/preferences/theme/", {"theme": "light", "next": "/inbox/?status=resolved"})
    assert response.status_code == 302 and response["Location"] == "/inbox/?status=resolved"
    away = client.post("/preferences/theme/", {"theme": "light", "next": "https://evil.example/"})
    assert away["Location"] == "/inbox/"


@pytest.mark.parametrize("path", ["/preferences/", "/preferences/time-zone/", "/preferences/theme/"])
def test_preferences_need_a_login(demo, client, path):
    response = client.post(path, {"time_zone": "Europe/Berlin", "theme": "dark"})
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert not Preference.objects.exists()


def test_each_person_sees_their_own_zone(manager, personas):
    from reviewconsole.inbox.models import Queue

    make_items(Queue.objects.get(slug="support"), 1)
    berlin = _login("Europe/Berlin")
    reviewer = Client()
    data = {"username": personas.reviewer.username, "password": PASSWORD, "time_zone": "Asia/Kolkata"}
    assert reviewer.post("/accounts/login/", data).status_code == 302
    assert "(Europe/Berlin)" in berlin.get("/inbox/").content.decode()
    html = reviewer.get("/inbox/").content.decode()
    assert "IST (Asia/Kolkata)" in html and "Europe/Berlin" not in html
