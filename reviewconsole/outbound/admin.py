"""Subscriptions (managed by admins) and the messages sent, with every attempt and a redeliver action."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from ..audit.services import audit_record
from ..read_only_admin import ReadOnlyAdmin
from ..workflows import all_specs
from .addresses import PrivateAddressError, check_destination
from .models import EVENT_TYPES, Attempt, OutboundMessage, Subscription
from .services import message_redeliver


class SubscriptionForm(forms.ModelForm):
    events = forms.MultipleChoiceField(
        choices=[(e, e) for e in EVENT_TYPES], widget=forms.CheckboxSelectMultiple, required=True
    )
    workflows = forms.MultipleChoiceField(
        choices=lambda: [(s.name, s.title) for s in all_specs()],
        widget=forms.CheckboxSelectMultiple,
        required=False,
        help_text="None ticked: every workflow.",
    )

    class Meta:
        model = Subscription
        fields = ("name", "url", "events", "workflows", "enabled", "secret")

    def clean_url(self) -> str:
        url = str(self.cleaned_data["url"])
        try:
            check_destination(url)
        except PrivateAddressError as exc:
            raise forms.ValidationError(str(exc)) from None
        return url


@admin.register(Subscription)
class SubscriptionAdmin(admin.ModelAdmin):
    form = SubscriptionForm
    list_display = ("name", "url", "enabled", "created_at")
    list_filter = ("enabled",)

    def get_fields(self, request: HttpRequest, obj: Subscription | None = None) -> list[str]:
        fields = ["name", "url", "events", "workflows", "enabled"]
        # The signing secret is for the people who configure the receiver, not for every reader.
        if self.has_change_permission(request, obj):
            fields.append("secret")
        return fields


class AttemptInline(admin.TabularInline):
    model = Attempt
    fields = ("number", "at", "status_code", "error", "duration_ms")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(OutboundMessage)
class OutboundMessageAdmin(ReadOnlyAdmin):
    list_display = ("id", "event_type", "subscription", "url", "status", "attempts", "next_attempt_at", "created_at")
    list_filter = ("status", "event_type", "subscription")
    search_fields = ("id", "payload")
    date_hierarchy = "created_at"
    readonly_fields = [f.name for f in OutboundMessage._meta.fields]
    inlines = [AttemptInline]
    actions = ["redeliver"]

    def has_redeliver_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("outbound.redeliver_outboundmessage")

    @admin.action(description="Redeliver the selected messages now", permissions=["redeliver"])
    def redeliver(self, request: HttpRequest, queryset: QuerySet[OutboundMessage]) -> None:
        count = 0
        for message in queryset:
            message_redeliver(message=message)
            audit_record(action="outbound.redeliver", user=request.user, target=message, request=request)
            count += 1
        self.message_user(request, f"{count} message(s) queued for redelivery.", messages.SUCCESS)
