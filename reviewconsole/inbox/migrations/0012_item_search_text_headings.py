"""Refill every item's ``search_text`` with the title and summary its row shows.

Until now the search matched the item's raw title, message and payload only, so "refund $250" or
"approved by policy", what the list says, found nothing. New items get the full text when they
open (``assignment.item_search_text``) and again when decided; this writes it for the rows
already there, in batches. Reversing leaves the longer text (it still holds the old one).
"""

from __future__ import annotations

from typing import Any

from django.db import migrations, models

from reviewconsole.inbox.items.assignment import item_search_text

BATCH = 500


def refill(apps: Any, schema_editor: Any) -> None:
    item_model = apps.get_model("inbox", "Item")
    changed = []
    for row in item_model.objects.order_by("pk").iterator(chunk_size=BATCH):
        text = item_search_text(row)
        if text != row.search_text:
            row.search_text = text
            changed.append(row)
        if len(changed) >= BATCH:
            item_model.objects.bulk_update(changed, ["search_text"])
            changed = []
    if changed:
        item_model.objects.bulk_update(changed, ["search_text"])


class Migration(migrations.Migration):
    dependencies = [("inbox", "0011_item_search_trigram")]

    operations = [
        migrations.AlterField(
            model_name="item",
            name="search_text",
            field=models.TextField(
                blank=True, help_text="Lower-cased title, message, payload and the row's title and summary, for search."
            ),
        ),
        migrations.RunPython(refill, migrations.RunPython.noop, elidable=True),
    ]
