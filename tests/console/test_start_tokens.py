"""New request sent twice: the form's one-time ``start_token`` starts one session, and every
repeat of the same form is sent to it (``console/start_tokens.py``)."""

from __future__ import annotations

import re
import threading

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client

from reviewconsole.audit.models import AuditEntry
from reviewconsole.console.models import StartToken
from reviewconsole.workflow_sessions.models import WorkflowSession
from tests.conftest import COMPLAINT

PATH = "/new/email-review/"


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _token(client: Client, path: str = PATH) -> str:
    page = client.get(path)
    assert page.status_code == 200
    [token] = re.findall(r'name="start_token" value="([^"]+)"', page.content.decode())
    return token


def test_the_form_carries_a_token_of_its_own_and_is_sent_once(manager):
    client = _client(manager)
    first, second = _token(client), _token(client)
    assert first != second and len(first) >= 40
    html = client.get(PATH).content.decode()
    assert 'id="start-form" data-submit-once' in html
    assert StartToken.objects.filter(user=manager, workflow="email-review").count() == 3


def test_the_same_form_posted_again_lands_on_the_session_it_started(manager, on_commit):
    client = _client(manager)
    token = _token(client)
    with on_commit():
        answers = [client.post(PATH, {"f.complaint": COMPLAINT, "start_token": token}) for _ in range(3)]
    session = WorkflowSession.objects.get()
    assert [(a.status_code, a["Location"]) for a in answers] == [(302, f"/sessions/{session.id}/")] * 3
    assert AuditEntry.objects.filter(action="session.start").count() == 1
    assert StartToken.objects.get(key=token).session == session


def test_a_form_refused_for_its_fields_keeps_its_token_for_the_corrected_post(manager, on_commit):
    client = _client(manager)
    token = _token(client)
    with on_commit():
        refused = client.post(PATH, {"f.complaint": "", "start_token": token})
        started = client.post(PATH, {"f.complaint": COMPLAINT, "start_token": token})
    assert refused.status_code == 400 and started.status_code == 302
    assert WorkflowSession.objects.count() == 1


@pytest.mark.parametrize("which", ["missing", "forged", "another user's", "another workflow's"])
def test_a_post_without_a_live_token_of_this_form_starts_nothing_and_offers_a_fresh_form(
    manager, personas, on_commit, which
):
    client = _client(manager)
    token = {
        "missing": "",
        "forged": "x" * 43,
        "another user's": lambda: _token(_client(personas.queue_manager)),
        "another workflow's": lambda: _token(client, "/new/vip-discount/"),
    }[which]
    token = token() if callable(token) else token
    with on_commit():
        page = client.post(PATH, {"f.complaint": COMPLAINT, "start_token": token})
    assert page.status_code == 400
    html = page.content.decode()
    assert "This form had expired" in html and COMPLAINT.split()[0] in html
    assert re.search(r'name="start_token" value="[^"]+"', html)
    assert not WorkflowSession.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_three_copies_of_the_form_at_the_same_moment_start_one_session(demo_tx):
    user = get_user_model().objects.get(username="manager")
    token = _token(_client(user))
    barrier = threading.Barrier(3)
    answers = []

    def send():
        barrier.wait()
        try:
            answers.append(_client(user).post(PATH, {"f.complaint": COMPLAINT, "start_token": token}))
        finally:
            connection.close()

    threads = [threading.Thread(target=send) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    session = WorkflowSession.objects.get()
    assert [(a.status_code, a["Location"]) for a in answers] == [(302, f"/sessions/{session.id}/")] * 3
    assert AuditEntry.objects.filter(action="session.start").count() == 1
