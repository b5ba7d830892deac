"""The admin of approval policies: the admin's rules (validated when saved, with their shadow
agreement figure), the verdicts recorded per request (read only), and standing approvals
(listed, revocable; the revocation audited)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from ..audit.services import audit_record
from ..read_only_admin import ReadOnlyAdmin
from ..workflows import all_specs
from ..workflows.conditions import rule_error
from .models import FirstApproval, PolicyRule, PolicyVerdict, StandingApproval
from .shadow import agreement
from .standing import standing_revoke


class PolicyRuleForm(forms.ModelForm):
    """A rule is validated when saved: its conditions (CEL over args and state), its decision."""

    class Meta:
        model = PolicyRule
        fields = ["workflow", "name", "tool", "when", "decide", "reason", "four_eyes_over", "queue", "shadow"]
        fields += ["enabled", "position"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        names = [(s.name, f"{s.title} ({s.name})") for s in all_specs()]
        current = self.instance.workflow if self.instance.pk else ""
        if current and current not in {n for n, _ in names}:
            names.append((current, f"{current} (not registered)"))
        self.fields["workflow"] = forms.ChoiceField(choices=names)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        error = rule_error(
            name=data.get("name") or "",
            tool=data.get("tool") or "",
            when=data.get("when") or "",
            decide=data.get("decide") or None,
            four_eyes_over=data.get("four_eyes_over") or None,
        )
        if error is not None:
            named = f"Approval policy {data.get('name')!r}"
            fields = ("four_eyes_over", "when", "decide", "tool")
            field = next((f for f in fields if error.startswith((f"{named}, {f}:", f"{named}: {f} "))), None)
            raise forms.ValidationError({field: error} if field else error)
        return data


@admin.register(PolicyRule)
class PolicyRuleAdmin(admin.ModelAdmin):
    form = PolicyRuleForm
    list_display = ("workflow", "name", "tool", "when", "decide", "four_eyes_over", "shadow", "enabled", "agreement")
    list_filter = ("workflow", "shadow", "enabled", "decide")
    search_fields = ("name", "tool", "when")

    @admin.display(description="agreed with people")
    def agreement(self, obj: PolicyRule) -> str:
        """For a shadow rule: how often people decided as it would have (agreed / compared)."""
        agreed, compared = agreement(obj.workflow, obj.name)
        if not compared:
            return "—" if not obj.shadow else "0 / 0"
        return f"{agreed} / {compared} ({100 * agreed / compared:.0f}%)"


@admin.register(PolicyVerdict)
class PolicyVerdictAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "workflow", "tool", "rule", "outcome", "approvals_required", "shadow_rule")
    list_display += ("shadow_decision", "person_decision", "agreed")
    list_filter = ("workflow", "outcome", "shadow_rule", "agreed")
    raw_id_fields = ("session_interrupt", "standing")


@admin.register(FirstApproval)
class FirstApprovalAdmin(ReadOnlyAdmin):
    list_display = ("session_interrupt", "user", "at")
    raw_id_fields = ("session_interrupt",)


@admin.register(StandingApproval)
class StandingApprovalAdmin(ReadOnlyAdmin):
    """Listed and revocable (the action), never edited: a grant records who approved what."""

    list_display = ("id", "workflow", "tool", "args", "scope", "granted_by", "granted_at", "expires_at")
    list_display += ("revoked_at", "uses", "live")
    list_filter = ("workflow", "scope", ("revoked_at", admin.EmptyFieldListFilter))
    actions = ["revoke"]

    @admin.display(boolean=True, description="live")
    def live(self, obj: StandingApproval) -> bool:
        return obj.is_live()

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        # Django offers actions only to users with a permission the action names (change here).
        return bool(request.user.has_perm("policies.change_standingapproval")) and obj is None

    @admin.action(description="Revoke the selected standing approvals", permissions=["change"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[StandingApproval]) -> None:
        now = timezone.now()
        revoked = 0
        for approval in queryset:
            with transaction.atomic():
                if not standing_revoke(approval, by=request.user, now=now):  # type: ignore[arg-type]
                    continue  # revoked already
                revoked += 1
                audit_record(
                    action="policy.standing_revoke",
                    user=request.user,
                    target=approval,
                    request=request,
                    detail={"tool": approval.tool, "scope": approval.scope, "uses": approval.uses},
                )
        messages.success(request, f"Revoked {revoked} standing approval(s).")
