from django.apps import AppConfig


class OutboundConfig(AppConfig):
    name = "reviewconsole.outbound"
    label = "outbound"
    verbose_name = "Outbound events"
