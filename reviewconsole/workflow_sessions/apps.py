from django.apps import AppConfig


class WorkflowSessionsConfig(AppConfig):
    name = "reviewconsole.workflow_sessions"
    label = "workflow_sessions"
    verbose_name = "Workflow sessions"

    def ready(self) -> None:
        from . import checks  # noqa: F401 (registers the model settings' system checks)
        from .outbox_admin import register

        register()  # the outbox's read-only admin page
