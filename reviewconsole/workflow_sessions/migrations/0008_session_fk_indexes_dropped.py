"""Events, session interrupts and answers lose the index Django gives a foreign key: their
(session, seq), (session, node_path), (session, status) and (session, applied_at) indexes serve
every lookup by session, so the extra index only cost every insert its write and its bytes. On PostgreSQL its ``_like`` twin goes too.
The index is dropped in place (no table copy on SQLite); reversing creates it again."""

from django.db import migrations, models

_INDEXES = [
    ("workflow_sessions_event", "workflow_sessions_event_session_id_3767164a"),
    ("workflow_sessions_interrupt", "workflow_sessions_interrupt_session_id_39622b91"),
    ("workflow_sessions_answer", "workflow_sessions_delivery_session_id_a18f472f"),  # named when it was Delivery
]


def _drop(apps, schema_editor):
    quote = schema_editor.quote_name
    for _, name in _INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {quote(name)}")
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(f"DROP INDEX IF EXISTS {quote(name + '_like')}")


def _create(apps, schema_editor):
    quote = schema_editor.quote_name
    for table, name in _INDEXES:
        schema_editor.execute(f"CREATE INDEX {quote(name)} ON {quote(table)} ({quote('session_id')})")
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(
                f"CREATE INDEX {quote(name + '_like')} ON {quote(table)} ({quote('session_id')} varchar_pattern_ops)"
            )


class Migration(migrations.Migration):
    dependencies = [
        ("workflow_sessions", "0007_correlation_key"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="event",
                    name="session",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=models.deletion.PROTECT,
                        related_name="events",
                        to="workflow_sessions.workflowsession",
                    ),
                ),
                migrations.AlterField(
                    model_name="interrupt",
                    name="session",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=models.deletion.PROTECT,
                        related_name="session_interrupts",
                        to="workflow_sessions.workflowsession",
                    ),
                ),
                migrations.AlterField(
                    model_name="answer",
                    name="session",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=models.deletion.PROTECT,
                        related_name="answers",
                        to="workflow_sessions.workflowsession",
                    ),
                ),
            ],
            database_operations=[migrations.RunPython(_drop, _create)],
        ),
    ]
