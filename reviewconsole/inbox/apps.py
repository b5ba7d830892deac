from django.apps import AppConfig
from django.contrib.auth.signals import user_logged_out
from django.db.models.signals import post_delete, post_save


class InboxConfig(AppConfig):
    name = "reviewconsole.inbox"
    label = "inbox"
    verbose_name = "Inbox"

    def ready(self) -> None:
        from .consumers import close_on_logout
        from .models import Queue
        from .routing import forget_queues

        post_save.connect(forget_queues, sender=Queue, dispatch_uid="inbox-queues-save")
        post_delete.connect(forget_queues, sender=Queue, dispatch_uid="inbox-queues-delete")
        user_logged_out.connect(close_on_logout, dispatch_uid="inbox-sockets-logout")
