from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "reviewconsole.api"
    label = "api"
    verbose_name = "API clients"
