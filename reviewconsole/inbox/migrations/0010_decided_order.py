"""Decided pages list the newest decision first: order "my decisions" by ``decided_at``, and give
every decided item one (items closed before ``decided_at`` was always set take their asking time)."""

from django.conf import settings
from django.db import migrations, models
from django.db.models import F


def fill_decided_at(apps, schema_editor):
    item = apps.get_model("inbox", "Item")
    item.objects.exclude(status="pending").filter(decided_at__isnull=True).update(decided_at=F("created_at"))


class Migration(migrations.Migration):
    dependencies = [
        ("inbox", "0009_item_interrupt_queue_decided"),
        ("workflow_sessions", "0007_correlation_key"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(fill_decided_at, migrations.RunPython.noop),
        migrations.RemoveIndex(model_name="item", name="interrupt_decided_by"),
        migrations.AddIndex(
            model_name="item",
            index=models.Index(fields=["decided_by", "status", "decided_at", "id"], name="interrupt_decided_by_at"),
        ),
    ]
