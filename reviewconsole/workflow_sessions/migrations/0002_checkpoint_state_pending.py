from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("workflow_sessions", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="checkpoint",
            name="state",
            field=models.JSONField(blank=True, help_text="Session state at the pause (for restore).", null=True),
        ),
        migrations.AddField(
            model_name="checkpoint",
            name="pending",
            field=models.JSONField(blank=True, default=list, help_text="Wire ids of the interrupts pending then."),
        ),
    ]
