import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("api", "0001_initial"),
        ("workflow_sessions", "0002_checkpoint_state_pending"),
    ]

    operations = [
        migrations.CreateModel(
            name="AguiThread",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("workflow", models.CharField(max_length=100)),
                ("thread_id", models.CharField(max_length=200)),
                ("last_seq", models.PositiveIntegerField(default=0)),
                ("last_message_id", models.CharField(blank=True, max_length=200)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "client",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="+", to="api.apiclient"
                    ),
                ),
                (
                    "session",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="agui_thread",
                        to="workflow_sessions.workflowsession",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("client", "workflow", "thread_id"), name="agui_thread_once")
                ],
            },
        ),
    ]
