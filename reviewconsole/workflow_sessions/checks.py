"""System checks of the model settings (``manage.py check``; ``serve`` and ``worker`` run them too).

- ``reviewconsole.E101``: ``REVIEWCONSOLE["MODELS"]`` or one of its entries is malformed, or
  ``REVIEWCONSOLE["MODEL"]`` names no entry (the message names the entry and the field);
- ``reviewconsole.E102``: a workflow names a model (``model`` or ``agent_models``) that is not in
  ``MODELS`` (the message names the workflow, the agent and the model);
- ``reviewconsole.W101``: the ``API_KEY_ENV`` of an entry in use names an environment variable that is not set
  (requests go without a key, which only a local server accepts).
"""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning, register
from django.core.exceptions import ImproperlyConfigured

from ..workflows import all_specs
from .llm import DEFAULT, model_configs, model_names

__all__ = ["check_models"]


@register("reviewconsole")
def check_models(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """The model settings' errors and warnings (see the module docstring)."""
    try:
        configs = model_configs()
    except ImproperlyConfigured as exc:
        return [Error(str(exc), id="reviewconsole.E101")]
    messages: list[CheckMessage] = []
    default = settings.REVIEWCONSOLE.get("MODEL")
    if default not in configs:
        messages.append(
            Error(
                f"REVIEWCONSOLE['MODEL'] (REVIEWCONSOLE_MODEL) is {default!r}, which is not in "
                f"REVIEWCONSOLE['MODELS'] (known: {sorted(configs)}).",
                id="reviewconsole.E101",
            )
        )
    used = {default} | {name for spec in all_specs() for name in model_names(spec).values()}
    for config in configs.values():
        if config.name in used and config.api_key_env and not os.environ.get(config.api_key_env):
            messages.append(
                Warning(
                    f"REVIEWCONSOLE['MODELS'][{config.name!r}]: the environment variable {config.api_key_env} "
                    "is not set; requests to the model go without a key.",
                    id="reviewconsole.W101",
                )
            )
    for spec in all_specs():
        for agent, name in {"": spec.model, **spec.agent_models}.items():
            if name != DEFAULT and name not in configs:
                who = f"agent {agent!r} of workflow {spec.name!r}" if agent else f"workflow {spec.name!r}"
                messages.append(
                    Error(
                        f"The {who} names the model {name!r}, which is not in REVIEWCONSOLE['MODELS'] "
                        f"(known: {sorted(configs)}).",
                        id="reviewconsole.E102",
                    )
                )
    return messages
