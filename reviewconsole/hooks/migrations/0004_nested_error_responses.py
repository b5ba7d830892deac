"""Stored refusals in the one JSON error format: a copy of a delivery refused before it was
answered ``{"error": code, "message": ...}`` is answered ``{"error": {"code", "message", ...}}``
like every other refusal (``reviewconsole.json_errors``)."""

from django.db import migrations


def nest_errors(apps, schema_editor):
    WebhookDelivery = apps.get_model("hooks", "WebhookDelivery")
    for delivery in WebhookDelivery.objects.filter(status_code__gte=400).iterator():
        response = delivery.response
        if not isinstance(response, dict) or not isinstance(response.get("error"), str):
            continue
        details = {k: v for k, v in response.items() if k not in ("error", "message")}
        delivery.response = {
            "error": {"code": response["error"], "message": str(response.get("message", "")), **details}
        }
        delivery.save(update_fields=["response"])


def flatten_errors(apps, schema_editor):
    WebhookDelivery = apps.get_model("hooks", "WebhookDelivery")
    for delivery in WebhookDelivery.objects.filter(status_code__gte=400).iterator():
        error = delivery.response.get("error") if isinstance(delivery.response, dict) else None
        if isinstance(error, dict) and isinstance(error.get("code"), str):
            details = {k: v for k, v in error.items() if k not in ("code", "message")}
            delivery.response = {"error": error["code"], "message": error.get("message", ""), **details}
            delivery.save(update_fields=["response"])


class Migration(migrations.Migration):
    dependencies = [("hooks", "0003_verbose_name_plural")]

    operations = [migrations.RunPython(nest_errors, flatten_errors)]
