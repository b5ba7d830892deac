"""Webhook endpoints (their workflow picked from the registry), secrets, and the deliveries with Replay."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from ..read_only_admin import ReadOnlyAdmin
from ..workflows import UnknownWorkflowError, all_specs, get
from .models import WebhookDelivery, WebhookEndpoint, WebhookSecret
from .services import webhook_replay


class WebhookSecretInline(admin.TabularInline):
    """Several secrets may be valid at once: add the new one, switch the sender, then delete the old."""

    model = WebhookSecret
    extra = 0
    fields = ("label", "secret", "created_at")
    readonly_fields = ("created_at",)


def _registered(name: str) -> bool:
    try:
        get(name)
    except UnknownWorkflowError:
        return False
    return True


class WebhookEndpointForm(forms.ModelForm):
    """The workflow is a choice among the registered ones; an endpoint left naming one that is no
    longer registered shows it as such and must be moved to a registered one to be saved."""

    workflow = forms.ChoiceField(help_text="The registered workflow a delivery starts.")

    class Meta:
        model = WebhookEndpoint
        fields = ("slug", "workflow", "enabled", "description", "input_mapping", "thread_key", "rate_limit")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = [("", "---------"), *((s.name, f"{s.title} ({s.name})") for s in all_specs())]
        current = self.instance.workflow if self.instance.pk else ""
        if current and not _registered(current):
            choices.append((current, f"{current} (not registered)"))
        self.fields["workflow"].choices = choices  # type: ignore[attr-defined]

    def clean_workflow(self) -> str:
        name = str(self.cleaned_data["workflow"])
        if not _registered(name):
            raise forms.ValidationError(f"{name!r} is not a registered workflow: pick one of the list.")
        return name


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):
    form = WebhookEndpointForm
    list_display = ("slug", "workflow_shown", "enabled", "rate_limit", "created_at")
    list_filter = ("enabled", "workflow")
    fields = ("slug", "workflow", "enabled", "description", "input_mapping", "thread_key", "rate_limit")
    inlines = [WebhookSecretInline]

    @admin.display(description="workflow", ordering="workflow")
    def workflow_shown(self, obj: WebhookEndpoint) -> str:
        """The workflow's name, or that it is no longer registered (its deliveries get a 404)."""
        if _registered(obj.workflow):
            return obj.workflow
        return f"{obj.workflow} (not registered: deliveries answer 404)"

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
