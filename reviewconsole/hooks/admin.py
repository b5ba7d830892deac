from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from ..workflow_sessions.admin import ReadOnlyAdmin
from .models import WebhookDelivery, WebhookEndpoint, WebhookSecret
from .services import webhook_replay


class WebhookSecretInline(admin.TabularInline):
    """Several secrets may be valid at once: add the new one, switch the sender, then delete the old."""

    model = WebhookSecret
    extra = 0
    fields = ("label", "secret", "created_at")
    readonly_fields = ("created_at",)


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):
    list_display = ("slug", "workflow", "enabled", "rate_limit", "created_at")
    list_filter = ("enabled", "workflow")
    fields = ("slug", "workflow", "enabled", "description", "input_mapping", "rate_limit")
    inlines = [WebhookSecretInline]

    def get_inlines(self, request: HttpRequest, obj: WebhookEndpoint | None) -> list[type]:
        # Secrets are shown to those who may change the endpoint only (not to auditors).
        return self.inlines if self.has_change_permission(request, obj) else []


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdmin):
    list_display = ("received_at", "endpoint", "webhook_id", "outcome", "status_code", "session", "duplicates")
    list_filter = ("endpoint", "outcome", "received_at")
    search_fields = ("webhook_id", "session__id", "error")
    date_hierarchy = "received_at"
    readonly_fields = [f.name for f in WebhookDelivery._meta.fields]
    actions = ["replay"]

    def has_replay_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("hooks.replay_webhookdelivery")

    @admin.action(description="Replay the selected deliveries (as new deliveries)", permissions=["replay"])
    def replay(self, request: HttpRequest, queryset: QuerySet[WebhookDelivery]) -> None:
        for delivery in queryset:
            try:
                result = webhook_replay(delivery=delivery, user=request.user, request=request)
            except ValueError as exc:
                self.message_user(request, f"Delivery {delivery.webhook_id}: {exc}", messages.ERROR)
                continue
            level = messages.SUCCESS if result.status < 400 else messages.WARNING
            # The admin capitalises a message's first letter: start with a word, never the id.
            self.message_user(request, f"Delivery {delivery.webhook_id}: replayed, answer {result.status}.", level)
