"""Property-based tests of the webhook door: any body, any headers, never a 500, never a session unless valid."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviewconsole.hooks.mapping import map_input
from reviewconsole.workflow_sessions.models import WorkflowSession
from tests.conftest import signed_headers

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=50),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)
HEADER = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=80)
HYPO = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(autouse=True)
def no_rate_limit(settings):
    """Every example is a delivery to the same endpoint; the rate limit is tested elsewhere."""
    settings.REVIEWCONSOLE = {**settings.REVIEWCONSOLE, "WEBHOOK_RATE_LIMIT": 1_000_000}


@HYPO
@given(body=JSON)
def test_any_signed_json_gets_202_or_400_and_a_session_only_when_valid(demo, client, body):
    text = json.dumps(body)
    before = WorkflowSession.objects.count()
    response = client.post("/hooks/email-review/", text, content_type="application/json", headers=signed_headers(text))
    assert response.status_code in (202, 400), response.content
    if response.status_code == 400:
        assert WorkflowSession.objects.count() == before
    else:
        assert WorkflowSession.objects.count() == before + 1
        # Whatever was accepted became the run's input with a non-empty complaint (a bare string is taken as
        # the text); the run itself is not started here (the ``db`` fixture never commits).
        session = WorkflowSession.objects.get(pk=response.json()["session_id"])
        assert session.checkpoint["root"]["input"]["complaint"].strip()


@HYPO
@given(raw=st.binary(max_size=300), webhook_id=HEADER, timestamp=HEADER, signature=HEADER)
def test_any_unsigned_bytes_and_headers_get_a_4xx_and_no_session(demo, client, raw, webhook_id, timestamp, signature):
    headers = {"webhook-id": webhook_id, "webhook-timestamp": timestamp, "webhook-signature": signature}
    response = client.post("/hooks/email-review/", raw, content_type="application/json", headers=headers)
    assert 400 <= response.status_code < 500
    json.loads(response.content)
    assert WorkflowSession.objects.count() == 0


@HYPO
@given(raw=st.binary(max_size=300))
def test_any_signed_bytes_get_a_4xx_or_202_never_a_500(demo, client, raw):
    text = raw.decode("latin-1")
    response = client.post("/hooks/email-review/", raw, content_type="application/json", headers=signed_headers(text))
    assert response.status_code < 500


@given(body=JSON, mapping=st.dictionaries(st.text(max_size=5), st.text(max_size=12), max_size=3))
def test_a_mapping_never_raises(body, mapping):
    result = map_input(body, mapping)
    if mapping:
        assert isinstance(result, dict) and set(result) <= set(mapping)
    else:
        assert result is body


pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
