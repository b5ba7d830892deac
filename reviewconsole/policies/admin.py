"""The admin of approval policies: the admin's rules (validated when saved, with their shadow
agreement figure) beside the rules the workflows declare in code (read only; replacing one is a
visible choice, audited), the verdicts recorded per request (read only), and standing approvals
(listed, revocable; the revocation audited)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from ..audit.services import audit_record
from ..read_only_admin import ReadOnlyAdmin
from ..workflows import UnknownWorkflowError, all_specs, get
from ..workflows.conditions import rule_error
from ..workflows.policy_scope import spec_rule_error, unchecked_state
from .models import FirstApproval, PolicyRule, PolicyVerdict, StandingApproval
from .rules import Rule, workflow_rules
from .shadow import agreement
from .standing import standing_revoke


class PolicyRuleForm(forms.ModelForm):
    """A rule is validated when saved: its tool (one of the workflow's), its conditions (CEL over
    ``args``, the tool's parameters, and ``state``, the workflow's ``state_schema``; a name neither
    declares is refused, naming the rule and the name), its decision, and its name: one the
    workflow's own rules use is refused unless "replaces the workflow's rule" is ticked."""

    class Meta:
        model = PolicyRule
        fields = ["workflow", "name", "replaces_workflow_rule", "tool", "when", "decide", "reason"]
        fields += ["four_eyes_over", "queue", "shadow", "enabled", "position"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        names = [(s.name, f"{s.title} ({s.name})") for s in all_specs()]
        current = self.instance.workflow if self.instance.pk else ""
        if current and current not in {n for n, _ in names}:
            names.append((current, f"{current} (not registered)"))
        self.fields["workflow"] = forms.ChoiceField(choices=names)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        name = data.get("name") or ""
        rule = {
            "name": name,
            "tool": data.get("tool") or "",
            "when": data.get("when") or "",
            "decide": data.get("decide") or None,
            "four_eyes_over": data.get("four_eyes_over") or None,
        }
        try:
            spec = get(data.get("workflow") or "")
        except UnknownWorkflowError:
            spec = None
        error = spec_rule_error(spec, **rule) if spec is not None else rule_error(**rule)
        if error is not None:
            named = f"Approval policy {name!r}"
            fields = ("four_eyes_over", "when", "decide", "tool")
            field = next((f for f in fields if error.startswith((f"{named}, {f}:", f"{named}: {f} "))), None)
            raise forms.ValidationError({field: error} if field else error)
        declared = {r.name: r for r in workflow_rules(spec.name)} if spec is not None else {}
        replaces = bool(data.get("replaces_workflow_rule"))
        if name in declared and not replaces:
            raise forms.ValidationError(
                {
                    "name": f"Workflow {spec.name!r} declares a rule named {name!r} in its code (listed on the rules' "  # type: ignore[union-attr]
                    'page). Tick "Replaces workflow rule" to replace it, or choose another name.'
                }
            )
        if replaces and name not in declared:
            raise forms.ValidationError(
                {"replaces_workflow_rule": f"The workflow declares no rule named {name!r}: nothing to replace."}
            )
        return data


@admin.register(PolicyRule)
class PolicyRuleAdmin(admin.ModelAdmin):
    """The admin's rules, and above them (read-only) the rules the workflows declare in their code,
    each with the admin's rule that replaces it, if any. Saving a rule that replaces one is
    audited as ``policy.rule_replace`` (the workflow's rule before, the admin's after); a condition
    reading ``state`` of a workflow without a ``state_schema`` is saved with a warning that its
    state names could not be checked."""

    form = PolicyRuleForm
    list_display = ("workflow", "name", "replaces_workflow_rule", "tool", "when", "decide", "four_eyes_over")
    list_display += ("shadow", "enabled", "agreement")
    list_filter = ("workflow", "replaces_workflow_rule", "shadow", "enabled", "decide")
    search_fields = ("name", "tool", "when")

    @admin.display(description="agreed with people")
    def agreement(self, obj: PolicyRule) -> str:
        """For a shadow rule: how often people decided as it would have (agreed / compared)."""
        return _agreement(obj.workflow, obj.name, obj.shadow)

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        return super().changelist_view(request, {**(extra_context or {}), "workflow_rules": _declared_rules()})

    def save_model(self, request: HttpRequest, obj: PolicyRule, form: Any, change: bool) -> None:
        with transaction.atomic():
            super().save_model(request, obj, form, change)
            replaced = next((r for r in workflow_rules(obj.workflow) if r.name == obj.name), None)
            if obj.replaces_workflow_rule and replaced is not None:
                audit_record(
                    action="policy.rule_replace",
                    user=request.user,
                    target=obj,
                    request=request,
                    before=_rule_fields(replaced),
                    after=_rule_fields(obj),
                    detail={"workflow": obj.workflow, "rule": obj.name, "enabled": obj.enabled},
                )
        try:
            spec = get(obj.workflow)
        except UnknownWorkflowError:
            return
        if unchecked_state(spec, obj.when, obj.four_eyes_over):
            messages.warning(
                request,
                f"Workflow {obj.workflow} declares no state_schema, so the state names of rule {obj.name} could "
                "not be checked: a misspelt one is never there and the rule would not apply.",
            )


_FIELDS = ("tool", "when", "decide", "reason", "four_eyes_over", "queue", "shadow")


def _rule_fields(rule: Rule | PolicyRule) -> dict[str, Any]:
    return {name: getattr(rule, name) for name in _FIELDS}


def _agreement(workflow: str, rule: str, shadow: bool) -> str:
    agreed, compared = agreement(workflow, rule)
    if not compared:
        return "0 / 0" if shadow else "—"
    return f"{agreed} / {compared} ({100 * agreed / compared:.0f}%)"


def _declared_rules() -> list[dict[str, Any]]:
    """The rules every registered workflow declares in its code, for the rules' page: each rule's
    fields, its shadow agreement, and the admin's row replacing it (None when none does)."""
    replacing = {(r.workflow, r.name): r for r in PolicyRule.objects.filter(replaces_workflow_rule=True).order_by("pk")}
    return [
        {
            "workflow": spec.name,
            **_rule_fields(rule),
            "name": rule.name,
            "agreement": _agreement(spec.name, rule.name, rule.shadow),
            "replaced_by": replacing.get((spec.name, rule.name)),
        }
        for spec in all_specs()
        for rule in workflow_rules(spec.name)
    ]


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
