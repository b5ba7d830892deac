"""A request's details (its payload) as readable key/value, never raw JSON, and escaped."""

from __future__ import annotations

from reviewconsole.inbox.templatetags.inbox_details import detail_rows


def test_keys_become_labels_and_values_plain_text():
    rows = detail_rows({"affected_customers": 3, "page_on_call": True, "note": None, "tags": ["a", "b"]})
    assert rows == [
        {"label": "Affected customers", "text": "3", "rows": None},
        {"label": "Page on call", "text": "Yes", "rows": None},
        {"label": "Note", "text": "—", "rows": None},
        {"label": "Tags", "text": "a, b", "rows": None},
    ]


def test_nested_objects_and_lists_of_them_are_rows_of_their_own():
    rows = detail_rows({"incident": {"title": "Checkout down"}, "people": [{"name": "Ann"}]})
    assert rows[0] == {
        "label": "Incident",
        "text": None,
        "rows": [{"label": "Title", "text": "Checkout down", "rows": None}],
    }
    assert rows[1]["rows"] == [{"label": "1", "text": None, "rows": [{"label": "Name", "text": "Ann", "rows": None}]}]
    assert detail_rows("just text") == [{"label": "Value", "text": "just text", "rows": None}]


def test_the_triage_page_shows_the_incident_as_key_value_escaped(client, manager, start_session):
    _, items = start_session("incident-triage", {"title": "Checkout <b>down</b>", "details": "500 on /pay"})
    client.force_login(manager)
    page = client.get(f"/inbox/items/{items[0].pk}/").content.decode()
    payload = page[page.index('<div id="payload">') :]
    payload = payload[: payload.index("</div>")]
    assert "<dt>Title</dt><dd>Checkout &lt;b&gt;down&lt;/b&gt;</dd>" in payload
    assert "<dt>Details</dt><dd>500 on /pay</dd>" in payload
    assert "{" not in payload  # no JSON
    assert 'type="email"' in page  # the contact's email field
    assert "Component 1" in page and "Components 1" not in page
