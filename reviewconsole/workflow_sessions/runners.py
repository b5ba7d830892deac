"""One engine runner per registered workflow version, on the ORM store, with the workflow's models (:mod:`.llm`)."""

from __future__ import annotations

import functools

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

from engine import Runner, VersionMismatchError

from ..workflows import get
from .llm import built_model, workflow_model
from .models import WorkflowSession
from .store import OrmStore

__all__ = ["runner_for", "runner_for_session"]


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
        model=workflow_model(spec.name),
        lease_ttl=settings.REVIEWCONSOLE["LEASE_TTL"],
    )


@receiver(setting_changed)
def _forget_on_change(*, setting: str, **kwargs: object) -> None:
    """Build models and runners anew after a test changes ``REVIEWCONSOLE`` (override_settings)."""
    if setting == "REVIEWCONSOLE":
        _runner.cache_clear()
        workflow_model.cache_clear()
        built_model.cache_clear()
