from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save


class OutboundConfig(AppConfig):
    name = "reviewconsole.outbound"
    label = "outbound"
    verbose_name = "Outbound events"

    def ready(self) -> None:
        from .models import Subscription
        from .services import forget_subscriptions

        post_save.connect(forget_subscriptions, sender=Subscription, dispatch_uid="outbound-subscriptions-save")
        post_delete.connect(forget_subscriptions, sender=Subscription, dispatch_uid="outbound-subscriptions-delete")
