from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "reviewconsole.audit"
    label = "audit"
    verbose_name = "Audit log"

    def ready(self) -> None:
        from . import signals  # noqa: F401 (connects the login and admin-change receivers)
