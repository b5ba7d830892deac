"""Without ``../shared`` beside the clone the ADK trace tests skip, naming the missing folder;
``REVIEWCONSOLE_CONFORMANCE_REQUIRED=1`` (CI) makes that a failure. These tests need no traces."""

from __future__ import annotations

import pytest

from tests.conformance.harness import REQUIRED_ENV, require_traces


def test_missing_traces_skip_and_say_which_folder(tmp_path, monkeypatch):
    monkeypatch.delenv(REQUIRED_ENV, raising=False)
    missing = tmp_path / "shared" / "conformance" / "adk"
    with pytest.raises(pytest.skip.Exception) as skipped:
        require_traces(missing)
    assert str(missing) in str(skipped.value)
    assert "../shared/" in str(skipped.value)


@pytest.mark.parametrize("value", ["", "0"])
def test_only_the_value_1_makes_missing_traces_fail(tmp_path, monkeypatch, value):
    monkeypatch.setenv(REQUIRED_ENV, value)
    with pytest.raises(pytest.skip.Exception):
        require_traces(tmp_path / "missing")


def test_required_traces_fail_when_missing(tmp_path, monkeypatch):
    monkeypatch.setenv(REQUIRED_ENV, "1")
    missing = tmp_path / "shared" / "conformance" / "adk"
    with pytest.raises(pytest.fail.Exception) as failed:
        require_traces(missing)
    assert str(missing) in str(failed.value)


def test_present_traces_neither_skip_nor_fail(tmp_path, monkeypatch):
    monkeypatch.setenv(REQUIRED_ENV, "1")
    require_traces(tmp_path)  # a folder that exists: nothing happens
