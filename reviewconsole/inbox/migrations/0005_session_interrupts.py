"""Data: every existing item gets its session's own interrupt row (``workflow_sessions.Interrupt``),
the engine-facing fields and the decision copied, and is linked to it (``session_interrupt``)."""

from django.db import migrations

ASKED = (
    "session_id",
    "interrupt_id",
    "local_id",
    "kind",
    "function_name",
    "node_path",
    "branch",
    "invocation_id",
    "message",
    "payload",
    "response_schema",
    "tool_call",
    "metadata",
    "status",
    "response",
    "decision",
    "reason",
    "decided_by_id",
    "decided_by_label",
    "decided_at",
    "created_at",
)

BATCH = 1000


def link_items(apps, schema_editor):
    Item = apps.get_model("inbox", "Interrupt")
    SessionInterrupt = apps.get_model("workflow_sessions", "Interrupt")
    while True:
        items = list(Item.objects.filter(session_interrupt__isnull=True).order_by("id")[:BATCH])
        if not items:
            return
        rows = SessionInterrupt.objects.bulk_create(
            [SessionInterrupt(**{name: getattr(item, name) for name in ASKED}) for item in items]
        )
        for item, row in zip(items, rows, strict=True):
            item.session_interrupt_id = row.pk
        Item.objects.bulk_update(items, ["session_interrupt"])


class Migration(migrations.Migration):
    dependencies = [
        ("inbox", "0004_interrupt_session_interrupt"),
        ("workflow_sessions", "0005_interrupt_outboxevent"),
    ]

    operations = [migrations.RunPython(link_items, migrations.RunPython.noop)]
