from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "reviewconsole.api"
    label = "api"
    verbose_name = "API clients"

    def ready(self) -> None:
        # In ready(): these modules import models, which Django loads only once the app registry is ready.
        from ..outbound.services import register_signer
        from ..workflow_sessions.outbox import register_consumer
        from .review_events import SIGNER, client_secret, review_consume, review_wants

        # After the inbox's (10) and outbound's (20): the review's item exists, outbound is set up.
        register_consumer("reviews", review_consume, order=30, wants=review_wants)
        register_signer(SIGNER, client_secret)
