from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.tasks.signals import task_enqueued


class ConsoleConfig(AppConfig):
    name = "reviewconsole.console"
    label = "console"
    verbose_name = "Console"

    def ready(self) -> None:
        # In ready(): both import models (starts: sessions'; task_notify: django_tasks_db's), loaded only now.
        from .starts import sync_start_permissions
        from .task_notify import announce_enqueued

        # Enqueues announced to the worker processes on PostgreSQL (a no-op elsewhere).
        task_enqueued.connect(announce_enqueued, dispatch_uid="reviewconsole.console.announce_enqueued")

        # Once sessions' app migrated (the permission is on sessions' content type).
        post_migrate.connect(
            sync_start_permissions,
            sender=self.apps.get_app_config("workflow_sessions"),
            dispatch_uid="reviewconsole.console.start_permissions",
        )
