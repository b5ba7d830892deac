"""The email review workflow replays ADK's request_input traces."""

import pytest

from reviewconsole.demo import email_review
from tests.conformance.harness import assert_matches, load_trace, replay

pytestmark = pytest.mark.usefixtures("adk_traces")  # skipped, naming the folder, without ../shared


@pytest.mark.parametrize("name", ["request_input/phone_broke.json", "request_input/phone_broke_reject.json"])
async def test_email_review_replays_request_input_trace(name):
    trace = load_trace(name)
    events, model = await replay(trace, lambda m: email_review.build(m, name="request_input"))
    assert_matches(trace, events)
    assert model.calls == len(model.responses)
