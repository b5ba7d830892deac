from django.apps import AppConfig


class AguiConfig(AppConfig):
    name = "reviewconsole.agui"
    label = "agui"
    verbose_name = "AG-UI threads"
