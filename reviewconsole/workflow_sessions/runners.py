"""One engine runner per registered workflow, on the ORM store, with the configured model."""

from __future__ import annotations

import functools

from django.conf import settings

from engine import Model, OfflineModel, Runner

from ..workflows import all_specs, get
from .store import OrmStore

__all__ = ["configured_model", "runner_for"]


@functools.cache
def configured_model() -> Model:
    """The model agents use: the offline draft model, or an OpenAI-compatible server.

    Raises:
        django.core.exceptions.ImproperlyConfigured: an unknown ``REVIEWCONSOLE["MODEL"]``.
    """
    conf = settings.REVIEWCONSOLE
    kind = conf["MODEL"]
    if kind == "offline":
        model = OfflineModel()
        for spec in all_specs():
            for agent, policy in spec.offline_policies.items():
                model.register(agent, policy)
        return model
    if kind == "openai":
        from engine.openai_model import OpenAIModel

        return OpenAIModel(base_url=conf["OPENAI_BASE_URL"], api_key=conf["OPENAI_API_KEY"], model=conf["OPENAI_MODEL"])
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured(f"REVIEWCONSOLE['MODEL'] must be 'offline' or 'openai', not {kind!r}.")


@functools.cache
def runner_for(workflow: str) -> Runner:
    """The runner of the workflow registered as ``workflow`` (UnknownWorkflowError if none)."""
    spec = get(workflow)
    model = configured_model()
    return Runner(
        spec.build(None),
        OrmStore(),
        app_name=spec.name,
        model=model,
        lease_ttl=settings.REVIEWCONSOLE["LEASE_TTL"],
    )
