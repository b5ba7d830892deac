from django.apps import AppConfig
from django.contrib.auth.signals import user_logged_out
from django.db.models.signals import post_delete, post_save


class InboxConfig(AppConfig):
    name = "reviewconsole.inbox"
    label = "inbox"
    verbose_name = "Inbox"

    def ready(self) -> None:
        # In ready(): these modules import models, which Django loads only once the app registry is ready.
        from ..workflow_sessions.outbox import register_consumer, register_sweeper
        from .items.assignment import forget_queues
        from .items.expiry import inbox_sweep
        from .items.outbox_consumer import inbox_consume, inbox_wants
        from .live.consumers import close_on_logout
        from .models import Queue

        # The inbox builds its items from the sessions' outbox, before outbound reads them (order 10 < 20).
        register_consumer("inbox", inbox_consume, order=10, wants=inbox_wants)
        register_sweeper("inbox", inbox_sweep)  # due items whose expiry task was lost; old queue changes

        post_save.connect(forget_queues, sender=Queue, dispatch_uid="inbox-queues-save")
        post_delete.connect(forget_queues, sender=Queue, dispatch_uid="inbox-queues-delete")
        user_logged_out.connect(close_on_logout, dispatch_uid="inbox-sockets-logout")
