"""``DeliveryAttempt`` is renamed ``Attempt`` (issue 13: "attempt" for outbound tries).

The table is renamed with its rows; Django renames the content type, and this renames its
permissions too (``view_deliveryattempt`` → ``view_attempt``…), so groups keep what they were granted.
"""

from django.db import migrations

ACTIONS = ("add", "change", "delete", "view")


def _rename_permissions(apps, old: str, new: str, new_label: str) -> None:
    permission = apps.get_model("auth", "Permission")
    for action in ACTIONS:
        if permission.objects.filter(content_type__app_label="outbound", codename=f"{action}_{new}").exists():
            continue
        permission.objects.filter(content_type__app_label="outbound", codename=f"{action}_{old}").update(
            codename=f"{action}_{new}", name=f"Can {action} {new_label}"
        )


def forwards(apps, schema_editor) -> None:
    _rename_permissions(apps, "deliveryattempt", "attempt", "attempt")


def backwards(apps, schema_editor) -> None:
    _rename_permissions(apps, "attempt", "deliveryattempt", "delivery attempt")


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("outbound", "0001_initial"),
    ]

    operations = [
        migrations.RenameModel(old_name="DeliveryAttempt", new_name="Attempt"),
        migrations.RunPython(forwards, backwards),
    ]
