"""An admin's rule replaces the workflow's rule of its name only when it says so
(``replaces_workflow_rule``). Rows saved before, which replaced it silently, keep doing so: the
flag is set on those whose name a registered workflow's rule has (read from the registry as it
is now)."""

from django.db import migrations, models


def flag_existing_replacements(apps, schema_editor):
    # The registry as it is now (not a historical model): imported when the migration runs, not when it is loaded.
    from reviewconsole.workflows import UnknownWorkflowError, get

    rules = apps.get_model("policies", "PolicyRule")
    for row in rules.objects.all():
        try:
            declared = {p.name for p in get(row.workflow).policies}
        except UnknownWorkflowError:
            continue
        if row.name in declared:
            rules.objects.filter(pk=row.pk).update(replaces_workflow_rule=True)


class Migration(migrations.Migration):
    dependencies = [
        ("policies", "0002_firstapproval_reason"),
    ]

    operations = [
        migrations.AddField(
            model_name="policyrule",
            name="replaces_workflow_rule",
            field=models.BooleanField(
                default=False,
                help_text="Replace the rule of this name that the workflow declares in its code (listed above the rules).",
            ),
        ),
        migrations.AlterField(
            model_name="policyrule",
            name="name",
            field=models.SlugField(help_text="Unique per workflow.", max_length=100),
        ),
        migrations.RunPython(flag_existing_replacements, migrations.RunPython.noop),
    ]
