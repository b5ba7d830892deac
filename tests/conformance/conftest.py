"""The ADK traces come from ``../shared/conformance/adk`` beside the clone: tests that read them use
the ``adk_traces`` fixture, which skips them with the folder's name when it is missing (fails with
``REVIEWCONSOLE_CONFORMANCE_REQUIRED=1``, as in ``.ci/run``)."""

from __future__ import annotations

import pytest

from tests.conformance.harness import EXTRA_TRACES, TRACES, require_traces


@pytest.fixture
def adk_traces():
    require_traces(TRACES)
    require_traces(EXTRA_TRACES)
    return TRACES
