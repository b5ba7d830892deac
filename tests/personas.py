"""The personas of the authorisation matrix, shared by every app's security tests.

Each persona is a name and a way to make a Django test client acting as it:

| persona | who |
|---|---|
| ``anonymous`` | nobody logged in, no token |
| ``reviewer`` | a member of the ``support`` queue's group (where email reviews go) |
| ``other_reviewer`` | a member of the ``finance`` queue only |
| ``queue_manager`` | a manager of the ``support`` queue (its ``managers`` group) and a member |
| ``auditor`` | the demo auditor: staff, view permissions only |
| ``staff`` | staff (may open the admin) with no permissions and no queue |
| ``client`` | an API client scoped to ``email-review`` and the ``support`` queue (bearer token) |
| ``client_unscoped`` | an API client scoped to ``vip-discount`` and the ``finance`` queue only |
| ``admin`` | a superuser |

Use :func:`persona_client` (needs the ``demo`` fixture's data). Engineers adding doors add their
expectations to ``tests/security/test_authorization_matrix.py``.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client

PASSWORD = "persona-pass-1234"

PERSONAS = (
    "anonymous",
    "reviewer",
    "other_reviewer",
    "queue_manager",
    "auditor",
    "staff",
    "client",
    "client_unscoped",
    "admin",
)
USERS = ("reviewer", "other_reviewer", "queue_manager", "auditor", "staff", "admin")
API_CLIENTS = ("client", "client_unscoped")


def _user(username: str, groups: list[str], **flags: bool):
    users = get_user_model()
    user = users.objects.filter(username=username).first()
    if user is None:
        user = users.objects.create_user(username, password=PASSWORD, **flags)
        user.groups.add(*Group.objects.filter(name__in=groups))
    return user


def persona_user(name: str):
    """The user behind a persona (created on first use), or None for anonymous and API clients."""
    from reviewconsole.inbox.models import Queue

    if name == "reviewer":
        return _user("p-reviewer", ["queue:support"])
    if name == "other_reviewer":
        return _user("p-other", ["queue:finance"])
    if name == "queue_manager":
        managers, _ = Group.objects.get_or_create(name="managers:support")
        queue = Queue.objects.get(slug="support")
        if any(f.name == "managers" for f in Queue._meta.get_fields()) and queue.managers_id is None:
            queue.managers = managers
            queue.save(update_fields=["managers"])
        return _user("p-manager", ["queue:support", "managers:support"])
    if name == "auditor":
        return get_user_model().objects.get(username="auditor")
    if name == "staff":
        return _user("p-staff", [], is_staff=True)
    if name == "admin":
        return get_user_model().objects.filter(username="p-admin").first() or get_user_model().objects.create_superuser(
            "p-admin", "admin@example.com", PASSWORD
        )
    return None


def persona_token(name: str) -> str | None:
    """The bearer token of an API-client persona (created on first use), else None."""
    from reviewconsole.api.models import ApiClient

    scopes = {"client": ["email-review"], "client_unscoped": ["vip-discount"]}
    queues = {"client": ["support"], "client_unscoped": ["finance"]}
    if name not in scopes:
        return None
    token = f"rc_persona_{name}_token_0000000000000000000000"
    if not ApiClient.objects.filter(name=f"p-{name}").exists():
        client = ApiClient(name=f"p-{name}", workflows=scopes[name], queues=queues[name])
        client.set_token(token)
        client.save()
    return token


def persona_client(name: str) -> Client:
    """A test client acting as ``name`` (see the table above)."""
    token = persona_token(name)
    client = Client(headers={"Authorization": f"Bearer {token}"}) if token else Client()
    user = persona_user(name)
    if user is not None:
        client.force_login(user)
    return client
