from django.contrib import admin

from ..read_only_admin import ReadOnlyAdmin
from .models import AuditEntry


@admin.register(AuditEntry)
class AuditEntryAdmin(ReadOnlyAdmin):
    list_display = ("at", "actor", "action", "target_type", "target_id", "ip")
    list_filter = ("action", "target_type")
    search_fields = ("actor", "target_id", "action")
    date_hierarchy = "at"
    readonly_fields = [f.name for f in AuditEntry._meta.fields]
