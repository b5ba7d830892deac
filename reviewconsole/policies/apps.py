from django.apps import AppConfig


class PoliciesConfig(AppConfig):
    name = "reviewconsole.policies"
    label = "policies"
    verbose_name = "Approval policies"
