"""Run listeners registered with ``workflow_sessions.listeners``: ``run_session`` consults them,
they hear the run and its end, one that raises never fails the run, and AG-UI's answers only for
its own sessions."""

from __future__ import annotations

import pytest

from reviewconsole.workflow_sessions import listeners
from reviewconsole.workflow_sessions.tasks import run_session


class Recorder:
    def __init__(self):
        self.calls = []

    def on_event(self, event):
        self.calls.append(("event", bool(event.partial)))

    def on_node_start(self, path, name):
        self.calls.append(("start", path))

    def on_node_end(self, path, status):
        self.calls.append(("end", path, status))

    def on_run_end(self, status):
        self.calls.append(("run_end", status))


class Broken(Recorder):
    def on_event(self, event):
        raise RuntimeError("a listener's bug")

    def on_run_end(self, status):
        raise RuntimeError("a listener's bug")


@pytest.fixture
def registry(monkeypatch):
    """The registry with no factory but the ones a test registers (AG-UI's is set aside)."""
    monkeypatch.setattr(listeners, "_factories", [])
    return listeners


def test_run_session_tells_the_registered_listener_the_run_and_its_end(registry, start_session):
    heard = {}

    def factory(session):
        heard[session.pk] = Recorder()
        return heard[session.pk]

    registry.register_run_listener(factory)
    registry.register_run_listener(factory)  # once, however often registered
    session, [_item] = start_session("email-review", {"complaint": "Broken screen"})

    calls = heard[session.pk].calls
    assert calls[0] == ("start", "email_review@1") and calls[-1] == ("run_end", "waiting")
    assert ("event", True) in calls and ("event", False) in calls and ("end", "email_review@1", "waiting") in calls
    assert sum(call[0] == "run_end" for call in calls) == 1


def test_a_listener_that_raises_never_fails_the_run_and_the_others_still_hear(registry, start_session):
    recorder = Recorder()
    registry.register_run_listener(lambda session: Broken())
    registry.register_run_listener(lambda session: recorder)

    session, [item] = start_session("email-review", {"complaint": "Broken screen"})

    assert session.status == "waiting" and item.status == "pending"
    assert recorder.calls[-1] == ("run_end", "waiting")


def test_a_session_no_factory_claims_runs_without_a_listener(registry, start_session):
    registry.register_run_listener(lambda session: None)
    session, _ = start_session("email-review", {"complaint": "Broken screen"})
    assert registry.run_listener(session) is None
    assert run_session.call(session.id) == "waiting"


def test_agui_listens_only_to_the_sessions_its_threads_started(start_session):
    from reviewconsole.agui.progress import ProgressListener, listener_for

    session, _ = start_session("email-review", {"complaint": "Broken screen"})
    assert listener_for(session) is None
    session.metadata = {"source": "agui", "thread_id": "t-1"}
    assert isinstance(listener_for(session), ProgressListener)
