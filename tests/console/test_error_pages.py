"""404, 403, 400 and 500 with DEBUG off: the site's own pages for a browser (its style, a way back,
nothing from inside), JSON ``{"error": …}`` for the JSON doors."""

from __future__ import annotations

import pytest
from django.test import Client, RequestFactory

from tests.console.error_urls import SECRET_DETAIL

pytestmark = pytest.mark.urls("tests.console.error_urls")


@pytest.fixture(autouse=True)
def debug_off(settings):
    settings.DEBUG = False


@pytest.fixture
def browser_client(manager):
    client = Client(raise_request_exception=False)
    client.force_login(manager)
    return client


def _page(response, status, heading):
    assert response.status_code == status
    assert response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    assert heading in html
    assert 'class="topbar"' in html and "console/console.css" in html  # the site's own page
    assert 'href="/inbox/"' in html  # a way back
    for leak in ("hunter2", "Traceback", "RuntimeError", "SuspiciousOperation", "/srv/secret"):
        assert leak not in html
    return html


def test_an_unknown_page_is_the_sites_404(browser_client):
    html = _page(browser_client.get("/no/such/page/<b>x</b>"), 404, "Page not found")
    assert "no/such/page" not in html  # the address is not echoed


def test_an_item_outside_the_users_queues_is_the_same_404(browser_client, outsider, start_review):
    _, item = start_review()
    client = Client(raise_request_exception=False)
    client.force_login(outsider)
    _page(client.get(f"/inbox/items/{item.pk}/"), 404, "Page not found")


def test_a_refusal_is_the_sites_403(browser_client):
    _page(browser_client.get("/fails/forbidden/"), 403, "You may not do this")


def test_a_bad_request_is_the_sites_400(browser_client):
    _page(browser_client.get("/fails/bad/"), 400, "This request could not be read")


def test_a_bug_is_the_sites_500(browser_client):
    _page(browser_client.get("/fails/broken/"), 500, "Something went wrong on our side")


def test_the_500_page_needs_no_database_and_no_request_context(demo, django_assert_num_queries):
    """``handler500`` renders without the request: no session, no user, no context processor."""
    from reviewconsole.unavailable import server_error

    request = RequestFactory().get("/inbox/")  # no session, no user: as when middleware failed
    try:
        raise RuntimeError(SECRET_DETAIL)
    except RuntimeError:
        with django_assert_num_queries(0):
            response = server_error(request)
    assert response.status_code == 500
    assert b"Something went wrong on our side" in response.content
    assert b"hunter2" not in response.content


def test_an_expired_form_is_the_sites_csrf_page(manager):
    client = Client(enforce_csrf_checks=True)
    client.force_login(manager)
    response = client.post("/preferences/theme/", {"theme": "dark"})
    _page(response, 403, "This form has expired")


@pytest.mark.parametrize(
    ("path", "headers", "status", "code"),
    [
        ("/agui/no/such/thing/", {}, 404, "not_found"),
        ("/hooks/fails/broken/", {}, 500, "internal_error"),
        ("/inbox/no/such/thing/", {"Accept": "application/json"}, 404, "not_found"),
        ("/fails/forbidden/", {"Accept": "application/json"}, 403, "forbidden"),
        ("/fails/bad/", {"Accept": "application/json"}, 400, "invalid_request"),
    ],
)
def test_the_json_doors_keep_their_json_errors(browser_client, path, headers, status, code):
    response = browser_client.get(path, headers=headers)
    assert response.status_code == status
    body = response.json()
    assert body["error"]["code"] == code and body["error"]["message"]
    assert "hunter2" not in response.content.decode()
