import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agui", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="AguiRewind",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("key", models.CharField(max_length=64)),
                ("done", models.BooleanField(default=False)),
                ("claimed_at", models.DateTimeField()),
                (
                    "thread",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="rewinds", to="agui.aguithread"
                    ),
                ),
            ],
            options={
                "constraints": [models.UniqueConstraint(fields=("thread", "key"), name="agui_rewind_once")],
            },
        ),
    ]
