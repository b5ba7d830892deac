from django.apps import AppConfig


class InboxConfig(AppConfig):
    name = "reviewconsole.inbox"
    label = "inbox"
    verbose_name = "Inbox"
