"""``Delivery`` is renamed ``Answer`` (issue 13: "answer" for a stored answer waiting to be applied,
"delivery" only for inbound webhooks).

The table is renamed with its rows, and its index ``delivery_pending`` ``answer_pending``; Django
renames the content type, and this renames its permissions too (``view_delivery`` →
``view_answer``…), so groups keep what they were granted.
"""

import django.db.models.deletion
from django.db import migrations, models

ACTIONS = ("add", "change", "delete", "view")


def _rename_permissions(apps, old: str, new: str) -> None:
    permission = apps.get_model("auth", "Permission")
    for action in ACTIONS:
        if permission.objects.filter(content_type__app_label="workflow_sessions", codename=f"{action}_{new}").exists():
            continue
        permission.objects.filter(content_type__app_label="workflow_sessions", codename=f"{action}_{old}").update(
            codename=f"{action}_{new}", name=f"Can {action} {new}"
        )


def forwards(apps, schema_editor) -> None:
    _rename_permissions(apps, "delivery", "answer")


def backwards(apps, schema_editor) -> None:
    _rename_permissions(apps, "answer", "delivery")


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("workflow_sessions", "0005_interrupt_outboxevent"),
    ]

    operations = [
        migrations.RenameModel(old_name="Delivery", new_name="Answer"),
        migrations.AlterModelOptions(name="answer", options={"ordering": ["session", "id"]}),
        migrations.AlterField(
            model_name="answer",
            name="session",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="answers",
                to="workflow_sessions.workflowsession",
            ),
        ),
        migrations.RenameIndex(model_name="answer", new_name="answer_pending", old_name="delivery_pending"),
        migrations.RunPython(forwards, backwards),
    ]
