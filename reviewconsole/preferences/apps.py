from django.apps import AppConfig


class PreferencesConfig(AppConfig):
    name = "reviewconsole.preferences"
    label = "preferences"
    verbose_name = "Preferences"

    def ready(self) -> None:
        from . import signals  # noqa: F401 (connects the login receiver: the browser's time zone)
