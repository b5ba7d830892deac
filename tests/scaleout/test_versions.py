"""H14: a new version of a workflow is deployed while an item of the old version is pending.

The registry keeps earlier versions (``WorkflowSpec.previous``), so a decision resumes on the
definition the session paused under. A version no longer kept is refused atomically: a 409
naming both versions, nothing stored. Runs on the embedded SQLite and, in the scale-out run
(``DATABASE_URL`` set), on PostgreSQL.
"""

from __future__ import annotations

import pytest

from engine import VersionMismatchError
from reviewconsole.demo import probes
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions import runners
from reviewconsole.workflow_sessions.models import Answer, Event, WorkflowSession
from reviewconsole.workflow_sessions.services import session_start
from reviewconsole.workflows import registry

pytestmark = pytest.mark.scaleout


@pytest.fixture
def deploy(monkeypatch):
    """``deploy(version, keep=())``: register the probe at ``version``, as a new deployment would."""

    def deploy(version: str, keep: tuple[str, ...] = ()) -> None:
        monkeypatch.setitem(registry.current().specs, "probe", probes.probe_spec(version, keep))
        runners._runner.cache_clear()

    yield deploy
    runners._runner.cache_clear()


@pytest.fixture
def paused(deploy, demo, on_commit):
    """A probe session paused under version 1, its item pending."""
    deploy("1")
    with on_commit():
        session = session_start(workflow="probe", data={"label": "h14"}, user_id="test")
    session.refresh_from_db()
    assert (session.status, session.workflow_version) == ("waiting", "1")
    return session, Item.objects.get(session=session, status="pending")


def _decide(client, manager, interrupt):
    client.force_login(manager)
    return client.post(f"/inbox/items/{interrupt.pk}/decide/", {"action": "approve"})


def test_runner_for_finds_kept_versions_and_names_a_missing_one(deploy):
    deploy("3", keep=("2", "1"))
    assert runners.runner_for("probe").version == "3"
    assert runners.runner_for("probe", "1").version == "1"
    assert runners.runner_for("probe", "2").version == "2"
    with pytest.raises(VersionMismatchError) as info:
        runners.runner_for("probe", "0")
    assert info.value.details == {"session_version": "0", "runner_version": "3"}
    assert "probe version '0'" in info.value.message and "(now '3')" in info.value.message


def test_a_decision_resumes_on_the_version_it_paused_under(paused, deploy, client, manager, on_commit):
    session, interrupt = paused
    deploy("2", keep=("1",))
    with on_commit():
        response = _decide(client, manager, interrupt)
    assert response.status_code == 302
    session.refresh_from_db()
    assert (session.status, session.workflow_version) == ("completed", "1")
    assert session.error is None
    assert Event.objects.filter(session=session, node_path="probe@1/finish@1").count() == 1


def test_a_decision_for_a_version_no_longer_deployed_is_refused_and_nothing_is_stored(
    paused, deploy, client, manager, on_commit
):
    session, interrupt = paused
    events = Event.objects.filter(session=session).count()
    deploy("2")
    with on_commit():
        response = _decide(client, manager, interrupt)
    assert response.status_code == 409
    text = response.content.decode()
    assert "probe version &#x27;1&#x27;" in text and "(now &#x27;2&#x27;)" in text
    interrupt.refresh_from_db()
    assert interrupt.status == "pending"
    assert not Answer.objects.filter(session=session).exists()
    assert Event.objects.filter(session=session).count() == events
    assert WorkflowSession.objects.get(pk=session.pk).status == "waiting"
