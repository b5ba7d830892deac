"""One engine runner per registered workflow version, on the ORM store, with the configured model."""

from __future__ import annotations

import functools

from django.conf import settings

from engine import Model, OfflineModel, Runner, VersionMismatchError

from ..workflows import all_specs, get
from .models import WorkflowSession
from .store import OrmStore

__all__ = ["configured_model", "runner_for", "runner_for_session"]


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


def runner_for(workflow: str, version: str | None = None) -> Runner:
    """The runner of the workflow registered as ``workflow``, at ``version`` (None: the current one).

    A spec keeps earlier versions in ``previous`` so that sessions paused under them resume on
    the definition they paused under (H14).

    Raises:
        UnknownWorkflowError: nothing is registered under ``workflow``.
        engine.VersionMismatchError: ``version`` is neither the current version nor a kept one;
            the message names both (``details``: ``session_version``, ``runner_version``).
    """
    current = _runner(workflow, 0)
    if version is None or version == current.version:
        return current
    for index in range(1, len(get(workflow).previous) + 1):
        runner = _runner(workflow, index)
        if runner.version == version:
            return runner
    raise VersionMismatchError(
        f"This session paused under {workflow} version {version!r}, which is no longer deployed "
        f"(now {current.version!r}); it cannot be resumed and nothing was recorded.",
        session_version=version,
        runner_version=current.version,
    )


def runner_for_session(session: WorkflowSession) -> Runner:
    """The runner for ``session``'s workflow at the version it started (and paused) under.

    Raises:
        UnknownWorkflowError: the workflow is no longer registered.
        engine.VersionMismatchError: its version is no longer deployed (see :func:`runner_for`).
    """
    return runner_for(session.workflow, session.workflow_version)


@functools.cache
def _runner(workflow: str, index: int) -> Runner:
    """Runner over the spec's ``build`` (index 0) or its ``previous[index - 1]`` builder."""
    spec = get(workflow)
    build = spec.build if index == 0 else spec.previous[index - 1]
    return Runner(
        build(None),
        OrmStore(),
        app_name=spec.name,
        model=configured_model(),
        lease_ttl=settings.REVIEWCONSOLE["LEASE_TTL"],
    )
