"""The workflows app: the registry's system checks, and a fresh registry when the settings change.

Only Django imports this module (``INSTALLED_APPS``); the package itself stays free of Django.
"""

from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.core.signals import setting_changed

from . import reload


def _settings_changed(*, setting: str, **_: Any) -> None:
    """``override_settings(REVIEWCONSOLE=…)`` (tests) loads the registry again on next use."""
    if setting == "REVIEWCONSOLE":
        reload()


class WorkflowsConfig(AppConfig):
    name = "reviewconsole.workflows"
    label = "workflows"
    verbose_name = "Workflows"

    def ready(self) -> None:
        from . import checks  # noqa: F401 (registers the checks)

        setting_changed.connect(_settings_changed, dispatch_uid="reviewconsole.workflows.reload")
