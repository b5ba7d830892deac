from django.apps import AppConfig


class AguiConfig(AppConfig):
    name = "reviewconsole.agui"
    label = "agui"
    verbose_name = "AG-UI threads"

    def ready(self) -> None:
        # In ready(): these modules import models, which Django loads only once the app registry is ready.
        from ..workflow_sessions.listeners import register_run_listener
        from .progress import listener_for

        register_run_listener(listener_for)
