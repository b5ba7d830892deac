"""Webhook endpoints (their workflow picked from the registry), secrets, and the deliveries with Replay.

A stored secret is never rendered, not even to a superuser: the endpoint's page shows each one's
label, fingerprint (the first 12 hex digits of its SHA-256) and age. A new secret is pasted (the
sender's, in a password field never filled back) or, left empty, generated; a generated one is
shown once, in the answer to the save (not cached, never in a message: those travel in a
cookie), as a new API client's token is (``api/admin.py``).
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from standardwebhooks.webhooks import Webhook

from ..read_only_admin import ReadOnlyAdmin
from ..workflows import UnknownWorkflowError, all_specs, get
from .models import WebhookDelivery, WebhookEndpoint, WebhookSecret
from .replay import webhook_replay


def new_secret() -> str:
    """A new Standard Webhooks secret: ``whsec_`` + base64 of 24 random bytes."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


class WebhookSecretForm(forms.ModelForm):
    """A new secret, pasted or generated; a stored one is kept as it is and never rendered."""

    secret = forms.CharField(
        required=False,
        max_length=200,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="A new secret: paste the sender's (whsec_<base64>), or leave empty to generate one, shown "
        "once after saving. A stored secret is never shown.",
    )

    class Meta:
        model = WebhookSecret
        fields = ("label", "secret")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.generated = ""
        if self.instance.pk:  # stored: kept as it is, its field empty and not editable
            self.fields["secret"].disabled = True
            self.fields["secret"].help_text = ""

    def clean_secret(self) -> str:
        if self.instance.pk:
            return str(self.instance.secret)
        value = str(self.cleaned_data.get("secret") or "")
        if not value:
            self.generated = value = new_secret()
            return value
        try:
            Webhook(value)
            ok = value.startswith("whsec_") and len(base64.b64decode(value.removeprefix("whsec_"))) >= 16
        except Exception:  # the library's and base64's errors both mean "not a secret"
            ok = False
        if not ok:
            raise forms.ValidationError("Not a webhook secret: whsec_ and the base64 of at least 16 bytes.")
        return value


class WebhookSecretInline(admin.TabularInline):
    """Several secrets may be valid at once: add the new one, switch the sender, then delete the old."""

    model = WebhookSecret
    form = WebhookSecretForm
    extra = 0
    fields = ("label", "secret", "fingerprint", "created_at")
    readonly_fields = ("fingerprint", "created_at")

    @admin.display(description="fingerprint")
    def fingerprint(self, obj: WebhookSecret) -> str:
        """Which secret this is, without showing it: sha256's first 12 hex digits."""
        if not obj.pk:
            return "—"
        return "sha256:" + hashlib.sha256(obj.secret.encode()).hexdigest()[:12]


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
        # Secrets (their labels and fingerprints) are listed to those who may change the endpoint only.
        return self.inlines if self.has_change_permission(request, obj) else []

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        super().save_formset(request, form, formset, change)
        made = [(f.instance.label, f.generated) for f in formset.forms if getattr(f, "generated", "")]
        if made:  # for this request's answer only
            request.generated_secrets = made  # type: ignore[attr-defined]

    def response_add(self, request: HttpRequest, obj: WebhookEndpoint, post_url_continue: str | None = None) -> Any:
        return self._generated(request, obj) or super().response_add(request, obj, post_url_continue)

    def response_change(self, request: HttpRequest, obj: WebhookEndpoint) -> Any:
        return self._generated(request, obj) or super().response_change(request, obj)

    def _generated(self, request: HttpRequest, obj: WebhookEndpoint) -> HttpResponse | None:
        """The secrets generated by this save, shown this once (not cached), or None."""
        made = getattr(request, "generated_secrets", None)
        if not made:
            return None
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"The new secret of {obj.slug}",
            "endpoint": obj,
            "generated": made,
        }
        response = TemplateResponse(request, "admin/hooks/webhookendpoint/secret.html", context)
        response["Cache-Control"] = "no-store"
        return response


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
