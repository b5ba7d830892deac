from django.contrib import admin

from ..workflow_sessions.admin import ReadOnlyAdmin
from .models import WebhookDelivery, WebhookEndpoint, WebhookSecret


class WebhookSecretInline(admin.TabularInline):
    model = WebhookSecret
    extra = 0
    fields = ("label", "secret", "created_at")
    readonly_fields = ("created_at",)


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):
    list_display = ("slug", "workflow", "enabled", "created_at")
    inlines = [WebhookSecretInline]


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdmin):
    list_display = ("endpoint", "webhook_id", "outcome", "status_code", "session", "received_at")
    list_filter = ("endpoint", "outcome")
    search_fields = ("webhook_id",)
    readonly_fields = [f.name for f in WebhookDelivery._meta.fields]
