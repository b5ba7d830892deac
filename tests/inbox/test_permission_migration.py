"""After the rename Interrupt → Item (``inbox.0006_item``) the inbox's auth permissions are
``*_item``, in a fresh database and in one migrated from before the rename, and what groups and
users were granted on ``*_interrupt`` holds as ``inbox.*_item``.

No data migration does this: Django 6.1's ``post_migrate`` receiver
``django.contrib.auth.management.rename_permissions_after_model_rename`` renames the permissions
of every ``RenameModel`` in the ``migrate`` plan (forwards and backwards), after the content type
was renamed. These tests keep it so (they fail if the pin drops below 6.1 or a squash loses the
``RenameModel``).
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.management import call_command

from reviewconsole.console.management.commands.demo import auditor_group

ACTIONS = ("add", "change", "delete", "view")


def _inbox_codenames(model: str) -> set[str]:
    return set(
        Permission.objects.filter(content_type__app_label="inbox", codename__endswith=f"_{model}").values_list(
            "codename", flat=True
        )
    )


def _migrate(target: str | None = None) -> None:
    """``manage.py migrate`` (its pre/post-migrate signals rename content types and create permissions)."""
    call_command("migrate", *(("inbox", target) if target else ()), verbosity=0, interactive=False)


def _granted_before_the_rename() -> tuple[Group, object]:
    """A group with view/change and a user in it with delete of their own, on the inbox's old ``*_interrupt`` rows."""
    group = Group.objects.create(name="legacy-reviewers")
    inbox = Permission.objects.filter(content_type__app_label="inbox")  # workflow_sessions has an Interrupt too
    group.permissions.set(inbox.filter(codename__in=["view_interrupt", "change_interrupt"]))
    user = get_user_model().objects.create_user("legacy", password="x-123456789")
    user.groups.add(group)
    user.user_permissions.add(inbox.get(codename="delete_interrupt"))
    return group, user


def _assert_items_only(group: Group, user) -> None:
    assert _inbox_codenames("interrupt") == set()
    assert _inbox_codenames("item") == {f"{a}_item" for a in ACTIONS}
    assert set(group.permissions.values_list("codename", flat=True)) == {"view_item", "change_item"}
    fresh = get_user_model().objects.get(pk=user.pk)  # has_perm caches on the object
    assert fresh.has_perm("inbox.view_item") and fresh.has_perm("inbox.change_item")
    assert fresh.has_perm("inbox.delete_item") and not fresh.has_perm("inbox.add_item")
    assert Permission.objects.get(content_type__app_label="inbox", codename="view_item").name == "Can view item"


@pytest.mark.django_db
def test_a_fresh_database_has_item_permissions_only_and_the_auditors_view_items(demo):
    assert _inbox_codenames("interrupt") == set()
    assert _inbox_codenames("item") == {f"{a}_item" for a in ACTIONS}
    assert "view_item" in set(auditor_group().permissions.values_list("codename", flat=True))
    auditor = get_user_model().objects.get(username="auditor")
    assert auditor.has_perm("inbox.view_item") and not auditor.has_perm("inbox.change_item")


@pytest.mark.django_db(transaction=True)
def test_a_database_from_before_the_rename_keeps_its_grants_as_item_permissions():
    try:
        _migrate("0003_notification_sent")
        assert _inbox_codenames("interrupt") == {f"{a}_interrupt" for a in ACTIONS}  # as it was then
        group, user = _granted_before_the_rename()
        _migrate()
        _assert_items_only(group, user)
    finally:
        _migrate()
