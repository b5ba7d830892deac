"""A person's locale: money and numbers written as in it (Babel), their browser's
``Accept-Language`` until they pick one on the preferences page, refused when not one of the list;
and the time zone refuses names that are not a region's zone."""

from __future__ import annotations

import pytest
from django.test import Client

from reviewconsole.inbox.pages.formats import money, number
from reviewconsole.preferences.locales import LOCALES, current_locale, negotiate, override
from reviewconsole.preferences.models import Preference
from tests.conftest import DEMO_PASSWORD

NBSP = "\u00a0"


@pytest.mark.parametrize(
    ("locale", "amount", "count"),
    [
        ("en-US", "$1,250.00", "12,500"),
        ("de-DE", f"1.250,00{NBSP}$", "12.500"),
        ("fr-FR", f"1\u202f250,00{NBSP}$US", None),
    ],
)
def test_money_and_numbers_in_a_locale(locale, amount, count):
    assert money(1250, locale=locale) == amount
    assert money("1250", "USD", locale) == amount
    if count:
        assert number(12500, locale=locale) == count


def test_the_active_locale_is_the_default_and_override_restores_the_one_before():
    assert current_locale() == "en-US" and money(1250) == "$1,250.00"
    with override("de-DE"):
        assert money(1250) == f"1.250,00{NBSP}$" and number(0.25) == "0,25"
        with override("en-GB"):
            assert money(-5) == "-US$5.00"
        assert number(1234.5) == "1.234,5"
    assert money(1250) == "$1,250.00"


def test_money_rounds_half_up_to_the_cent_and_leaves_text_alone():
    assert money("0.125", locale="de-DE") == f"0,13{NBSP}$"
    assert money("a lot <b>", locale="de-DE") == "a lot <b>" and money(None) == ""
    assert money(1250, locale="xx-XX") == "$1,250.00"  # an unknown tag: the default's


@pytest.mark.parametrize(
    ("header", "locale"),
    [
        ("de-DE,de;q=0.9,en;q=0.8", "de-DE"),
        ("de-at", "de-DE"),  # no de-AT in the list: the first locale of its language
        ("fr;q=0.5, en-GB;q=0.8", "en-GB"),  # the most wanted first, whatever the order
        ("zh-CN, ja;q=0.1", "ja-JP"),
        ("de;q=0, xx", ""),
        ("*", ""),
        ("", ""),
    ],
)
def test_accept_language_picks_the_best_locale_of_the_list(header, locale):
    assert negotiate(header) == locale


def _login(username="manager", **headers):
    client = Client(headers=headers)
    response = client.post("/accounts/login/", {"username": username, "password": DEMO_PASSWORD})
    assert response.status_code == 302
    return client


def _refund_page(client, item):
    return client.get(f"/inbox/items/{item.pk}/").content.decode()


@pytest.fixture
def refund(start_session):
    _, [item] = start_session("refund-approval", {"order_id": "A-17", "amount": 1250, "reason": "Arrived broken"})
    return item


def test_the_browsers_locale_is_the_persons_until_they_pick_one(manager, refund):
    client = _login(accept_language="de-DE,de;q=0.9")
    page = _refund_page(client, refund)
    assert f'<dd id="amount">1.250,00{NBSP}$' in page
    assert f'<h1 id="item-title">Refund 1.250,00{NBSP}$ for order A-17' in page  # never broken before the $
    row = Preference.objects.get(user=manager)
    assert (row.locale, row.locale_chosen) == ("de-DE", False)  # kept for their live rows and mails

    assert client.post("/preferences/", {"locale": "en-GB", "time_zone": "", "theme": "auto"}).status_code == 302
    row.refresh_from_db()
    assert (row.locale, row.locale_chosen) == ("en-GB", True)
    assert '<dd id="amount">US$1,250.00' in _refund_page(client, refund)  # the browser still asks for de-DE
    html = client.get("/preferences/").content.decode()
    assert '<option value="en-GB" selected>' in html


def test_as_this_browser_follows_the_browser_again(manager, refund):
    client = _login(accept_language="fr-FR")
    client.post("/preferences/", {"locale": "de-DE", "time_zone": "", "theme": "auto"})
    assert client.post("/preferences/", {"locale": "", "time_zone": "", "theme": "auto"}).status_code == 302
    assert "1\u202f250,00" in _refund_page(client, refund)
    row = Preference.objects.get(user=manager)
    assert (row.locale, row.locale_chosen) == ("fr-FR", False)


def test_without_accept_language_or_a_pick_money_is_en_us_and_nothing_is_saved(manager, refund):
    assert '<dd id="amount">$1,250.00' in _refund_page(_login(), refund)
    assert not Preference.objects.filter(user=manager).exists()


def test_the_preferences_page_lists_the_locales_in_their_own_language(manager):
    html = _login().get("/preferences/").content.decode()
    assert html.count('<select id="locale" name="locale"') == 1
    assert f'<option value="de-DE">Deutsch (Deutschland) — 1.250,00{NBSP}$</option>' in html
    assert all(f'<option value="{tag}"' in html for tag in LOCALES)


def test_an_unknown_locale_is_refused_on_the_form_and_nothing_is_saved(manager):
    client = _login()
    response = client.post("/preferences/", {"locale": "de-<b>XX</b>", "time_zone": "Europe/Berlin", "theme": "dark"})
    assert response.status_code == 400
    html = response.content.decode()
    assert "Unknown locale: de-&lt;b&gt;XX&lt;/b&gt; (pick one of the list, such as de-DE); nothing was saved." in html
    assert not Preference.objects.filter(user=manager).exists()


@pytest.mark.parametrize("zone", ["localtime", "Factory", "posixrules", "Etc/GMT+5", "CET"])
def test_a_zone_that_is_not_a_regions_is_refused(manager, zone):
    client = _login()
    response = client.post("/preferences/", {"time_zone": zone, "theme": "auto"})
    assert response.status_code == 400
    assert f"time zone: {zone}" in response.content.decode()
    assert not Preference.objects.filter(user=manager).exists()
    assert client.post("/preferences/time-zone/", {"time_zone": zone}).status_code == 204  # a hint, ignored
    assert not Preference.objects.filter(user=manager).exists()
    assert f'<option value="{zone}"' not in client.get("/preferences/").content.decode()


def test_a_json_caller_gets_the_json_error_shape(manager):
    client = _login()
    refused = client.post("/preferences/", {"time_zone": "Factory"}, headers={"Accept": "application/json"})
    assert refused.status_code == 400 and refused["Content-Type"] == "application/json"
    why = "Not a region's time zone: Factory (pick one such as Europe/Berlin)"
    assert refused.json() == {
        "error": {
            "code": "invalid_request",
            "message": f"{why}; nothing was saved.",
            "errors": [{"path": ["time_zone"], "message": why}],
        }
    }
    refused = client.post("/preferences/", {"locale": "tlh"}, headers={"Accept": "application/json"})
    assert refused.status_code == 400 and refused.json()["error"]["errors"][0]["path"] == ["locale"]
    assert not Preference.objects.filter(user=manager).exists()
    saved = client.post("/preferences/", {"locale": "ja-JP", "theme": "auto"}, headers={"Accept": "application/json"})
    assert saved.status_code == 204
    assert Preference.objects.get(user=manager).locale == "ja-JP"


def test_a_post_changes_only_the_fields_it_sends_and_a_json_body_is_refused(manager):
    """Found by an attack: a JSON body saved nothing but answered 204 after wiping the zone and the
    locale, and a post with the locale alone wiped the zone."""
    client = _login()
    assert client.post("/preferences/", {"locale": "en-US", "time_zone": "UTC", "theme": "dark"}).status_code == 302
    refused = client.post(
        "/preferences/",
        {"locale": "de-DE", "time_zone": "Europe/Berlin"},
        content_type="application/json",
        headers={"Accept": "application/json"},
    )
    assert refused.status_code == 415 and refused.json()["error"]["code"] == "unsupported_media_type"
    row = Preference.objects.get(user=manager)
    assert (row.locale, row.time_zone, row.theme) == ("en-US", "UTC", "dark")
    assert client.post("/preferences/", {"locale": "de-DE"}, headers={"Accept": "application/json"}).status_code == 204
    row.refresh_from_db()
    assert (row.locale, row.time_zone, row.theme) == ("de-DE", "UTC", "dark")  # the zone and theme kept
