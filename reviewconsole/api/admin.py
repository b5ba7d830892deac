"""API clients in the admin: a new client's token is shown once, then only its hash is kept; revoke."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from ..workflows import all_specs
from .models import ApiClient, IdempotencyRecord


class ApiClientForm(forms.ModelForm):
    workflows = forms.MultipleChoiceField(
        choices=lambda: [("*", "Every workflow"), *[(s.name, s.title) for s in all_specs()]],
        widget=forms.CheckboxSelectMultiple,
        help_text="The workflows this client may start, read and resume.",
    )

    class Meta:
        model = ApiClient
        fields = ("name", "workflows")


@admin.register(ApiClient)
class ApiClientAdmin(admin.ModelAdmin):
    form = ApiClientForm
    list_display = ("name", "token_prefix", "workflows", "revoked_at", "last_used_at", "created_at")
    list_filter = ("revoked_at",)
    search_fields = ("name", "token_prefix")
    readonly_fields = ("token_prefix", "revoked_at", "last_used_at", "created_at")
    actions = ["revoke"]

    def save_model(self, request: HttpRequest, obj: ApiClient, form: Any, change: bool) -> None:
        if not change:
            token = ApiClient.new_token()
            obj.set_token(token)
            super().save_model(request, obj, form, change)
            messages.warning(request, f"The token of {obj.name} (shown this once; copy it now): {token}")
            return
        super().save_model(request, obj, form, change)

    @admin.action(description="Revoke the selected clients' tokens", permissions=["change"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiClient]) -> None:
        from ..audit.services import audit_record

        for client in queryset.filter(revoked_at__isnull=True):
            ApiClient.objects.filter(pk=client.pk).update(revoked_at=timezone.now())
            audit_record(action="token.revoke", user=request.user, target=client, request=request)
        self.message_user(request, "Revoked.", messages.SUCCESS)


@admin.register(IdempotencyRecord)
class IdempotencyRecordAdmin(admin.ModelAdmin):
    list_display = ("client", "key", "status_code", "created_at")
    list_filter = ("client",)
    search_fields = ("key",)
    readonly_fields = [f.name for f in IdempotencyRecord._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
