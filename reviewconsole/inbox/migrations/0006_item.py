"""The inbox's ``Interrupt`` becomes ``Item`` (the reviewer's object; the session keeps its own
``workflow_sessions.Interrupt``). Renames only: the rows and their ids stay (the table becomes
``inbox_item``; the indexes keep their names); the related names follow the new word."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("inbox", "0005_session_interrupts"),
    ]

    operations = [
        migrations.RenameModel("Interrupt", "Item"),
        migrations.RemoveConstraint(model_name="notificationsent", name="notification_sent_once"),
        migrations.RenameField("queuechange", "interrupt", "item"),
        migrations.RenameField("notificationsent", "interrupt", "item"),
        migrations.AddConstraint(
            model_name="notificationsent",
            constraint=models.UniqueConstraint(fields=("item", "queue", "user"), name="notification_sent_once"),
        ),
        migrations.AlterField(
            model_name="item",
            name="escalated_from",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="escalated_items",
                to="inbox.queue",
            ),
        ),
        migrations.AlterField(
            model_name="item",
            name="queue",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="items", to="inbox.queue"
            ),
        ),
        migrations.AlterField(
            model_name="item",
            name="session",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="items",
                to="workflow_sessions.workflowsession",
            ),
        ),
    ]
