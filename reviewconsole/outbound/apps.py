from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save


class OutboundConfig(AppConfig):
    name = "reviewconsole.outbound"
    label = "outbound"
    verbose_name = "Outbound events"

    def ready(self) -> None:
        # In ready(): these modules import models, which Django loads only once the app registry is ready.
        from ..workflow_sessions.outbox import register_consumer
        from . import checks  # noqa: F401 (registers the outbound queue's system check)
        from .models import Subscription
        from .outbox_consumer import outbound_consume, outbound_wants
        from .services import forget_subscriptions

        # After the inbox's (order 20 > 10): it reads the inbox's items.
        register_consumer("outbound", outbound_consume, order=20, wants=outbound_wants)

        post_save.connect(forget_subscriptions, sender=Subscription, dispatch_uid="outbound-subscriptions-save")
        post_delete.connect(forget_subscriptions, sender=Subscription, dispatch_uid="outbound-subscriptions-delete")
