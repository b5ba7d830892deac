from django.apps import AppConfig


class AguiConfig(AppConfig):
    name = "reviewconsole.agui"
    label = "agui"
    verbose_name = "AG-UI threads"

    def ready(self) -> None:
        from ..workflow_sessions.listeners import register_run_listener  # models are loaded only now
        from .progress import listener_for

        register_run_listener(listener_for)
