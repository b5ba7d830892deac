from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "reviewconsole.audit"
    label = "audit"
    verbose_name = "Audit log"
