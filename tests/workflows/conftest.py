"""Product samples run on the engine alone, with the offline model's policies; and fixtures that
register workflow modules (the example package, modules written by a test) for one test."""

import sys
from pathlib import Path

import pytest

from engine import InMemoryStore, OfflineModel, Runner
from reviewconsole.workflows import all_specs, get, registry

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "purchase_order"
"""The example workflow package (a distribution: ``pyproject.toml``, the module ``purchase_order``)."""


@pytest.fixture(autouse=True)
def fresh_registry():
    """The registry loaded afresh after each test: one may register modules or entry points."""
    yield
    registry.forget()


@pytest.fixture
def offline_model():
    model = OfflineModel()
    for spec in all_specs():
        for agent, policy in spec.offline_policies.items():
            model.register(agent, policy)
    return model


@pytest.fixture
def runner_for(offline_model):
    def make(name):
        return Runner(get(name).build(None), InMemoryStore(), app_name=name, model=offline_model)

    return make


@pytest.fixture
def forget_modules(monkeypatch):
    """``forget("pkg", "pkg.sub")``: those modules out of ``sys.modules`` now, and again after the
    test, so a test imports its own copy and leaves none behind."""

    def forget(*names):
        for name in names:
            monkeypatch.delitem(sys.modules, name, raising=False)

    return forget


@pytest.fixture
def example_on_path(monkeypatch, forget_modules):
    """``examples/purchase_order`` on ``sys.path`` (as ``PYTHONPATH=examples/purchase_order``)."""
    forget_modules("purchase_order", "purchase_order.workflow")
    monkeypatch.syspath_prepend(str(EXAMPLE))


@pytest.fixture
def register(settings):
    """``register("mod.a", "mod.b")``: ``REVIEWCONSOLE["WORKFLOWS"]`` for this test; the registry
    reloads (``setting_changed``) now and when the setting is restored."""

    def register(*modules):
        settings.REVIEWCONSOLE = {**settings.REVIEWCONSOLE, "WORKFLOWS": list(modules)}

    return register


@pytest.fixture
def write_module(tmp_path, monkeypatch, forget_modules):
    """``write_module("name", source)``: a module file in a folder on ``sys.path`` for this test."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def write(name, source):
        forget_modules(name)
        (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
        return name

    return write
