from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "reviewconsole.console"
    label = "console"
    verbose_name = "Console"
