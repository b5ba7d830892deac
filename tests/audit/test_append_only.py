"""The audit log is append-only: no role changes or deletes an entry, not through the admin, the API or the ORM."""

from __future__ import annotations

import pytest

from reviewconsole.audit.models import AppendOnlyError, AuditEntry
from reviewconsole.audit.services import audit_record

ENTRIES = "/admin/audit/auditentry/"


@pytest.fixture
def entry(demo):
    return audit_record(action="item.view", actor="user:manager", target_type="inbox.item", target_id="1")


@pytest.fixture
def superuser(django_user_model, demo):
    return django_user_model.objects.create_superuser("root", "root@example.com", "root-pass-1234")


def test_the_model_refuses_changes_and_deletes(entry):
    entry.action = "forged"
    with pytest.raises(AppendOnlyError):
        entry.save()
    with pytest.raises(AppendOnlyError):
        entry.delete()
    with pytest.raises(AppendOnlyError):
        AuditEntry.objects.filter(pk=entry.pk).update(action="forged")
    with pytest.raises(AppendOnlyError):
        AuditEntry.objects.all().delete()
    entry.refresh_from_db()
    assert entry.action == "item.view"


@pytest.mark.parametrize("who", ["superuser", "auditor"])
def test_nobody_changes_or_deletes_an_entry_in_the_admin(client, entry, who, request):
    client.force_login(request.getfixturevalue(who))
    page = client.get(f"{ENTRIES}{entry.pk}/change/")
    assert page.status_code == 200
    assert b'name="_save"' not in page.content
    assert client.post(f"{ENTRIES}{entry.pk}/change/", {"action": "forged"}).status_code == 403
    assert client.get(f"{ENTRIES}{entry.pk}/delete/").status_code == 403
    assert client.post(f"{ENTRIES}{entry.pk}/delete/", {"post": "yes"}).status_code == 403
    assert client.get(f"{ENTRIES}add/").status_code == 403
    bulk = client.post(ENTRIES, {"action": "delete_selected", "_selected_action": [entry.pk], "post": "yes"})
    assert bulk.status_code in (200, 302)
    entry.refresh_from_db()
    assert entry.action == "item.view"
    assert AuditEntry.objects.filter(pk=entry.pk).exists()


def test_the_api_has_no_way_to_the_audit_log(client, entry):
    from tests.api.conftest import auth, make_api_client

    _, token = make_api_client("auditor-probe")
    for method in ("get", "post", "put", "patch", "delete"):
        response = getattr(client, method)(f"/api/v1/audit/{entry.pk}", headers=auth(token))
        assert response.status_code in (404, 405)
    entry.refresh_from_db()
    assert entry.action == "item.view"
