"""API clients in the admin: a new client's token and webhook secret are shown once (in the
answer's body), then only the token's hash is kept and the secret is never shown again (it stays
stored: the console signs its reviews' callbacks with it); revoke; replace a client's webhook
secret (the new one shown once, e.g. for the ``demo`` client ``manage.py demo`` made, or after a
leak). Reviews are listed read-only."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from ..audit.services import audit_record
from ..inbox.models import Queue
from ..outbound.models import new_secret
from ..read_only_admin import ReadOnlyAdmin
from ..workflows import all_specs
from .models import SCOPES, ApiClient, IdempotencyRecord, Review


class ApiClientForm(forms.ModelForm):
    workflows = forms.MultipleChoiceField(
        choices=lambda: [("*", "Every workflow"), *[(s.name, s.title) for s in all_specs()]],
        widget=forms.CheckboxSelectMultiple,
        help_text="The workflows this client may start, read and resume.",
    )

    scopes = forms.MultipleChoiceField(
        choices=list(SCOPES.items()),
        widget=forms.CheckboxSelectMultiple,
        required=False,
        help_text="Limit the token to the sessions this client started; let it answer requests a reviewer claimed.",
    )

    queues = forms.MultipleChoiceField(
        choices=lambda: [("*", "Every queue"), *Queue.objects.values_list("slug", "name")],
        widget=forms.CheckboxSelectMultiple,
        required=False,
        initial=["*"],
        help_text="The queues this client may ask reviews in (POST /api/v1/reviews).",
    )

    class Meta:
        model = ApiClient
        fields = ("name", "workflows", "scopes", "queues")


@admin.register(ApiClient)
class ApiClientAdmin(admin.ModelAdmin):
    form = ApiClientForm
    list_display = ("name", "token_prefix", "workflows", "queues", "revoked_at", "last_used_at", "created_at")
    list_filter = ("revoked_at",)
    search_fields = ("name", "token_prefix")
    readonly_fields = ("token_prefix", "revoked_at", "last_used_at", "created_at")
    actions = ["revoke", "replace_webhook_secret"]

    def save_model(self, request: HttpRequest, obj: ApiClient, form: Any, change: bool) -> None:
        if not change:
            token = ApiClient.new_token()
            obj.set_token(token)
            request.new_api_token = token  # type: ignore[attr-defined]  # for response_add, this request only
        super().save_model(request, obj, form, change)

    def response_add(self, request: HttpRequest, obj: ApiClient, post_url_continue: str | None = None) -> HttpResponse:
        """The new token and webhook secret in this response's body only (never a message: those
        travel in a cookie), not cached; after it only the token's hash and prefix are kept, and
        the secret is not shown again."""
        token = getattr(request, "new_api_token", None)
        if token is None:
            return super().response_add(request, obj, post_url_continue)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"The token of {obj.name}",
            "client": obj,
            "token": token,
            "webhook_secret": obj.webhook_secret,
        }
        response = TemplateResponse(request, "admin/api/apiclient/token.html", context)
        response["Cache-Control"] = "no-store"
        return response

    @admin.action(description="Replace the webhook secret of the selected client (shown once)", permissions=["change"])
    def replace_webhook_secret(self, request: HttpRequest, queryset: QuerySet[ApiClient]) -> HttpResponse | None:
        """A new webhook secret for one client, in this response's body only (as a new client's);
        its callbacks are signed with it from now on, retries of earlier ones too."""
        if queryset.count() != 1:
            self.message_user(request, "Select one client: its new secret is shown once.", messages.ERROR)
            return None
        client = queryset.get()
        client.webhook_secret = new_secret()
        client.save(update_fields=["webhook_secret"])
        audit_record(action="token.webhook_secret_replace", user=request.user, target=client, request=request)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"The new webhook secret of {client.name}",
            "client": client,
            "webhook_secret": client.webhook_secret,
        }
        response = TemplateResponse(request, "admin/api/apiclient/token.html", context)
        response["Cache-Control"] = "no-store"
        return response

    @admin.action(description="Revoke the selected clients' tokens", permissions=["change"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiClient]) -> None:
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


@admin.register(Review)
class ReviewAdmin(ReadOnlyAdmin):
    list_display = ("id", "title", "client", "queue", "kind", "created_at")
    list_filter = ("client", "queue", "kind")
    search_fields = ("id", "title")
    date_hierarchy = "created_at"
    readonly_fields = [f.name for f in Review._meta.fields]
