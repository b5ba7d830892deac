from django.apps import AppConfig


class HooksConfig(AppConfig):
    name = "reviewconsole.hooks"
    label = "hooks"
    verbose_name = "Webhooks"
