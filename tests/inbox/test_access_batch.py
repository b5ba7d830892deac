"""The inbox sockets' batched access check (``live/access.py``) answers as Django's own check
does, login by login, in a few queries for all of them."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.sessions.models import Session
from django.test import Client

from reviewconsole.inbox.items.selectors import queues_for
from reviewconsole.inbox.live.access import _check_all
from tests.conftest import make_outsider


def _login(user):
    client = Client()
    client.force_login(user)
    return client.session.session_key, user.pk


def test_a_batch_answers_as_each_check_would(demo, django_assert_max_num_queries):
    users = get_user_model().objects
    reviewer = users.create_user("batch-reviewer")
    reviewer.groups.add(Group.objects.get(name="queue:support"))
    holding = [users.get(username="manager"), reviewer, users.create_superuser("batch-admin"), make_outsider()]
    expected: dict = {_login(user): set(queues_for(user).values_list("pk", flat=True)) for user in holding}
    assert len({frozenset(queues) for queues in expected.values()}) == 3  # every queue, support, the outsider's
    changed = users.create_user("batch-changed", password="x-old-password-1")
    ended = _login(changed)
    changed.set_password("x-new-password-2")
    changed.save()  # the session's hash no longer matches the user's: the login ended
    expected[ended] = None
    expected[("no-such-session", reviewer.pk)] = None

    with django_assert_max_num_queries(5 + 2 * 3):  # the batch, plus Django's own check of the 2 that failed it
        assert _check_all(list(expected)) == expected
    assert not Session.objects.filter(session_key=ended[0]).exists()  # flushed, as auth.get_user does


def test_a_login_checked_before_ends_when_its_password_changes_or_its_session_does(demo):
    """The batch reads a session's data and a password's hash once per distinct value: a change of
    either after a check is seen by the next check."""
    users = get_user_model().objects
    first = users.create_user("batch-first", password="x-old-password-1")
    first.groups.add(Group.objects.get(name="queue:support"))
    second = users.create_user("batch-second")
    second.groups.add(Group.objects.get(name="queue:support"))
    logins = [_login(first), _login(second)]
    assert all(_check_all(logins).values())

    first.set_password("x-new-password-2")
    first.save()
    Session.objects.filter(session_key=logins[1][0]).update(session_data=Client().session.encode({}))

    assert _check_all(logins) == {logins[0]: None, logins[1]: None}
