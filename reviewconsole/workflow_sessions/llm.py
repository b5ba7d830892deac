"""The models agents use: named configurations in ``settings.REVIEWCONSOLE["MODELS"]``, one per workflow.

A configuration (``MODELS[name]``) is ``{"BACKEND": "offline"}`` (the deterministic demo model,
with each workflow's ``offline_policies``) or an OpenAI-compatible server::

    {"BACKEND": "openai", "BASE_URL": "http://127.0.0.1:8080/v1", "API_KEY_ENV": "ACME_LLM_KEY",
     "MODEL": "qwen2.5-7b-instruct", "TEMPERATURE": 0.2, "TIMEOUT": 60, "RETRIES": 2}

``API_KEY_ENV`` names the environment variable that holds the key (unset or empty: no key, for
local servers); the key is read when the model is built and never kept in settings, a
:class:`ModelConfig` or its ``repr``. ``TIMEOUT`` is seconds per request, ``RETRIES`` how many
times a failed call is tried again (``REVIEWCONSOLE["MODEL_BACKOFF"]`` sets the delays; see
:mod:`engine._model_retry` for what counts as a failure).

``REVIEWCONSOLE["MODEL"]`` names the default configuration; a :class:`~reviewconsole.workflows.
WorkflowSpec` names its own (``model``, ``"default"`` for the default) and may give some agents
another (``agent_models``). :func:`workflow_model` builds the :class:`engine.ModelRouter` for a
workflow. Errors in the configuration are reported by the system check of :mod:`.checks`.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from engine import Model, ModelRetry, ModelRouter, OfflineModel, RetryingModel

from ..workflows import WorkflowSpec, all_specs, get

__all__ = ["DEFAULT", "ModelConfig", "configured_model", "model_configs", "model_names", "workflow_model"]

DEFAULT = "default"
"""The model name a spec uses for ``REVIEWCONSOLE["MODEL"]``."""

BACKENDS = ("offline", "openai")
_KEYS = {"BACKEND", "BASE_URL", "API_KEY_ENV", "MODEL", "TEMPERATURE", "TIMEOUT", "RETRIES"}


@dataclass(frozen=True)
class ModelConfig:
    """One entry of ``MODELS`` (the key's *variable name*, never the key; see the module docstring)."""

    name: str
    backend: str
    base_url: str = ""
    api_key_env: str = ""
    model: str = ""
    temperature: float | None = None
    timeout: float = 60.0
    retries: int = 2

    @classmethod
    def from_setting(cls, name: str, entry: Any) -> ModelConfig:
        """Parse ``MODELS[name]``.

        Raises:
            ImproperlyConfigured: the entry is malformed; the message names it and the field.
        """
        where = f"REVIEWCONSOLE['MODELS'][{name!r}]"
        if not isinstance(entry, dict):
            raise ImproperlyConfigured(f"{where} must be a dict, not {type(entry).__name__}.")
        unknown = sorted(set(entry) - _KEYS)
        if unknown:
            raise ImproperlyConfigured(f"{where} has unknown keys {unknown}; known: {sorted(_KEYS)}.")
        backend = entry.get("BACKEND")
        if backend not in BACKENDS:
            raise ImproperlyConfigured(f"{where}['BACKEND'] must be one of {list(BACKENDS)}, not {backend!r}.")
        if backend == "offline":
            return cls(name=name, backend="offline")
        try:
            temperature = entry.get("TEMPERATURE")
            config = cls(
                name=name,
                backend="openai",
                base_url=str(entry.get("BASE_URL") or ""),
                api_key_env=str(entry.get("API_KEY_ENV") or ""),
                model=str(entry.get("MODEL") or ""),
                temperature=None if temperature is None else float(temperature),
                timeout=float(entry.get("TIMEOUT", 60.0)),
                retries=int(entry.get("RETRIES", 2)),
            )
        except (TypeError, ValueError) as exc:
            raise ImproperlyConfigured(f"{where}: TEMPERATURE, TIMEOUT and RETRIES must be numbers ({exc}).") from None
        if not config.model:
            raise ImproperlyConfigured(f"{where}['MODEL'] must name the model to ask for.")
        if config.timeout <= 0 or config.retries < 0:
            raise ImproperlyConfigured(f"{where}: TIMEOUT must be above 0 seconds and RETRIES 0 or more.")
        if config.base_url and not config.base_url.startswith(("http://", "https://")):
            from engine.openai_model import redact_url  # openai takes seconds to import: only when used

            shown = redact_url(config.base_url)
            raise ImproperlyConfigured(f"{where}['BASE_URL'] must be an http(s) URL, not {shown!r}.")
        if config.api_key_env.startswith(("sk-", "Bearer ")):
            raise ImproperlyConfigured(f"{where}['API_KEY_ENV'] must name an environment variable, not hold a key.")
        return config

    def build(self) -> Model:
        """The engine model of this configuration (the offline one with every workflow's policies)."""
        if self.backend == "offline":
            model = OfflineModel()
            for spec in all_specs():
                for agent, policy in spec.offline_policies.items():
                    model.register(agent, policy)
            return model
        from engine.openai_model import OpenAIModel  # openai takes seconds to import: only an OpenAI backend pays

        backend = OpenAIModel(
            base_url=self.base_url or None,
            # Never None: OpenAIModel would fall back to OPENAI_API_KEY, another server's key.
            api_key=(os.environ.get(self.api_key_env, "") if self.api_key_env else "") or "not-needed",
            model=self.model,
            temperature=self.temperature,
            timeout=self.timeout,
            max_retries=0,
            api_key_env=self.api_key_env,
        )
        return RetryingModel(backend, _retry(self.retries))


def _retry(retries: int) -> ModelRetry:
    backoff = {"INITIAL": 0.5, "MULTIPLIER": 2.0, "MAX": 8.0, "MAX_RETRY_AFTER": 60.0}
    backoff.update(settings.REVIEWCONSOLE.get("MODEL_BACKOFF", {}))
    return ModelRetry(
        attempts=retries + 1,
        initial_delay=float(backoff["INITIAL"]),
        multiplier=float(backoff["MULTIPLIER"]),
        max_delay=float(backoff["MAX"]),
        max_retry_after=float(backoff["MAX_RETRY_AFTER"]),
    )


def model_configs() -> dict[str, ModelConfig]:
    """Every configuration of ``MODELS``, by name.

    Raises:
        ImproperlyConfigured: ``MODELS`` is not a dict, or an entry is malformed (named).
    """
    entries = settings.REVIEWCONSOLE.get("MODELS", {"offline": {"BACKEND": "offline"}})
    if not isinstance(entries, dict):
        raise ImproperlyConfigured("REVIEWCONSOLE['MODELS'] must be a dict of model configurations by name.")
    if DEFAULT in entries:
        raise ImproperlyConfigured(
            f"REVIEWCONSOLE['MODELS'] cannot define {DEFAULT!r} (it means REVIEWCONSOLE['MODEL'])."
        )
    return {name: ModelConfig.from_setting(name, entry) for name, entry in entries.items()}


def model_names(spec: WorkflowSpec) -> dict[str, str]:
    """``{"": the workflow's model, agent: its model}``, each a name in ``MODELS`` (``default`` resolved)."""
    default = str(settings.REVIEWCONSOLE["MODEL"])
    names = {"": spec.model, **spec.agent_models}
    return {agent: default if name == DEFAULT else name for agent, name in names.items()}


def config_for(name: str) -> ModelConfig:
    """The configuration called ``name`` (``default``: ``REVIEWCONSOLE["MODEL"]``).

    Raises:
        ImproperlyConfigured: no such configuration, or ``MODELS`` is malformed.
    """
    if name == DEFAULT:
        name = str(settings.REVIEWCONSOLE["MODEL"])
    configs = model_configs()
    if name not in configs:
        raise ImproperlyConfigured(f"No model {name!r} in REVIEWCONSOLE['MODELS'] (known: {sorted(configs)}).")
    return configs[name]


@functools.cache
def built_model(name: str) -> Model:
    """The model of configuration ``name`` (``default`` resolved), built once per process.

    The offline model carries every workflow's ``offline_policies`` (agents are named per workflow).

    Raises:
        ImproperlyConfigured: no such configuration.
    """
    config = config_for(name)
    if config.name != name:
        return built_model(config.name)
    return config.build()


def configured_model() -> Model:
    """The default model (``REVIEWCONSOLE["MODEL"]``), with every workflow's offline policies.

    Raises:
        django.core.exceptions.ImproperlyConfigured: it is not in ``REVIEWCONSOLE["MODELS"]``.
    """
    return built_model(DEFAULT)


@functools.cache
def workflow_model(workflow: str) -> Model:
    """The model of ``workflow``'s runner: its agents' requests go to their configured models.

    Raises:
        UnknownWorkflowError: no such workflow.
        ImproperlyConfigured: a model it names is not configured.
    """
    names = model_names(get(workflow))
    default = built_model(names.pop(""))
    return ModelRouter(default, {agent: built_model(name) for agent, name in names.items()})
