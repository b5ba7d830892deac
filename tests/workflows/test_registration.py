"""Registering workflow modules: by setting, by environment, by an installed distribution's entry point.

The example package ``examples/purchase_order`` (module ``purchase_order``, not on the default
list) is registered each way; by setting, one of its sessions is decided in the inbox.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from reviewconsole.inbox.models import Item, Queue
from reviewconsole.settings import env
from reviewconsole.workflow_sessions.models import WorkflowSession
from reviewconsole.workflows import UnknownWorkflowError, all_specs, get, module_of, registry
from reviewconsole.workflows.checks import check_registry
from tests.conftest import _run_demo, post_webhook, texts
from tests.workflows.conftest import EXAMPLE

ROOT = Path(__file__).resolve().parents[2]
DEMO = ["email-review", "incident-triage", "refund-approval", "support-handoff", "vip-discount"]
ORDER = {
    "po_number": "PO-77",
    "requester": "Ana",
    "supplier": "Acme",
    "lines": [{"description": "Monitor", "quantity": 4, "unit_price": 300}],
}


def test_the_test_settings_register_the_demo_package_only():
    assert [s.name for s in all_specs()] == DEMO
    assert {module_of(name) for name in DEMO} == {"reviewconsole.demo"}
    with pytest.raises(UnknownWorkflowError):
        get("purchase-order")


def test_the_example_registered_by_setting_is_decided_in_the_inbox(
    db, example_on_path, register, monkeypatch, client, on_commit
):
    register("reviewconsole.demo", "purchase_order")
    assert [s.name for s in all_specs()] == sorted([*DEMO, "purchase-order"])
    assert module_of("purchase-order") == "purchase_order"
    assert check_registry() == []  # it imports, builds and validates
    _run_demo(monkeypatch)  # sync_workflows (the purchasing queue), users, an endpoint per workflow
    assert Queue.objects.get(slug="purchasing").managers.name == "managers:purchasing"

    with on_commit():
        response = post_webhook(client, ORDER, slug="purchase-order")
    assert response.status_code == 202, response.content
    item = Item.objects.get(status="pending", session_id=response.json()["session_id"])
    assert (item.queue.slug, item.workflow) == ("purchasing", "purchase-order")

    client.force_login(get_manager())
    assert 'name="f.cost_center"' in client.get(f"/inbox/items/{item.pk}/").content.decode()
    answer = {"action": "answer", "f.decision": '"approve"', "f.cost_center": "OP-1234", "f.comment": "ok"}
    with on_commit():
        decided = client.post(f"/inbox/items/{item.pk}/decide/", answer)
    assert decided.status_code == 302
    session = WorkflowSession.objects.get(pk=item.session_id)
    assert session.status == "completed"
    assert "Purchase order PO-77 placed with Acme: 1200.00 USD, approved, charged to OP-1234." in texts(session)


def get_manager():
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(username="manager")


def test_the_setting_is_reread_when_it_changes(example_on_path, register):
    register("purchase_order")
    assert [s.name for s in all_specs()] == ["purchase-order"]
    register("reviewconsole.demo")
    assert [s.name for s in all_specs()] == DEMO


# -- the environment -------------------------------------------------------------------------


def test_the_environment_list_replaces_the_default(monkeypatch):
    monkeypatch.delenv("REVIEWCONSOLE_TEST_WORKFLOWS", raising=False)
    monkeypatch.delenv("REVIEWCONSOLE_WORKFLOWS", raising=False)
    assert env.workflow_modules(["reviewconsole.demo"]) == ["reviewconsole.demo"]
    monkeypatch.setenv("REVIEWCONSOLE_WORKFLOWS", " purchase_order , acme.workflows,")
    assert env.workflow_modules(["reviewconsole.demo"]) == ["purchase_order", "acme.workflows"]
    monkeypatch.setenv("REVIEWCONSOLE_WORKFLOWS", "")
    assert env.workflow_modules(["reviewconsole.demo"]) == []
    monkeypatch.setenv("REVIEWCONSOLE_TEST_WORKFLOWS", "1")
    assert env.workflow_modules([]) == ["reviewconsole.demo.probes"]


def _python(code: str, **environ: str) -> str:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWCONSOLE_", "DJANGO_"))}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**clean, **environ},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


PRODUCTION = {
    "DJANGO_SECRET_KEY": "x" * 60,
    "DJANGO_ALLOWED_HOSTS": "example.com",
    "DATABASE_URL": "sqlite:////nonexistent/db.sqlite3",
}
SHOW_SETTING = "import json, reviewconsole.settings.{} as s; print(json.dumps(s.REVIEWCONSOLE['WORKFLOWS']))"


def test_production_registers_only_what_the_environment_names(tmp_path):
    assert json.loads(_python(SHOW_SETTING.format("production"), **PRODUCTION)) == []
    named = _python(SHOW_SETTING.format("production"), **PRODUCTION, REVIEWCONSOLE_WORKFLOWS="purchase_order")
    assert json.loads(named) == ["purchase_order"]
    embedded = _python(SHOW_SETTING.format("embedded"), REVIEWCONSOLE_VAR_DIR=str(tmp_path))
    assert json.loads(embedded) == ["reviewconsole.demo"]


def test_without_django_the_module_imports_no_django_and_reads_the_environment():
    code = (
        "import sys, reviewconsole.workflows as w; loaded = 'django' in sys.modules; "
        "print(loaded, [s.name for s in w.all_specs()], w.module_of('purchase-order'))"
    )
    out = _python(code, REVIEWCONSOLE_WORKFLOWS="purchase_order", PYTHONPATH=str(EXAMPLE))
    assert out == "False ['purchase-order'] purchase_order"


# -- an installed distribution's entry point --------------------------------------------------


@pytest.fixture(scope="module")
def installed_example(tmp_path_factory):
    """``pip install --no-deps --target <site> examples/purchase_order`` (from a copy, so the build
    leaves nothing in the repository): a real distribution with its ``entry_points.txt``."""
    base = tmp_path_factory.mktemp("purchase-order")
    source = shutil.copytree(EXAMPLE, base / "src", ignore=shutil.ignore_patterns("build", "*.egg-info"))
    site = base / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(site),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    return site


def test_an_installed_distribution_registers_its_module_through_its_entry_point(
    installed_example, monkeypatch, forget_modules, register
):
    import importlib.metadata

    forget_modules("purchase_order", "purchase_order.workflow")
    monkeypatch.syspath_prepend(str(installed_example))
    register("reviewconsole.demo")  # the setting does not name it
    [entry_point] = importlib.metadata.entry_points(group="reviewconsole.workflows")
    assert (entry_point.name, entry_point.value, entry_point.dist.name) == (
        "purchase_order",
        "purchase_order",
        "reviewconsole-purchase-order",
    )

    assert get("purchase-order").title == "Purchase order approval"
    assert module_of("purchase-order") == "purchase_order"
    assert sys.modules["purchase_order"].__file__.startswith(str(installed_example))
    sources = registry.current().sources
    assert registry.Source("purchase_order", "entry point 'purchase_order' of reviewconsole-purchase-order") in sources
    assert registry.current().problems == []


def test_an_installed_distribution_shows_in_manage_py_workflows(
    installed_example, monkeypatch, forget_modules, db, capsys
):
    forget_modules("purchase_order", "purchase_order.workflow")
    monkeypatch.syspath_prepend(str(installed_example))
    registry.forget()
    call_command("workflows", "--json")
    [row] = [r for r in json.loads(capsys.readouterr().out)["workflows"] if r["name"] == "purchase-order"]
    assert (row["module"], row["queue"], row["version"], row["model"]) == (
        "purchase_order",
        "purchasing",
        "1",
        "default",
    )


def test_a_module_named_by_the_setting_and_an_entry_point_is_loaded_once(
    installed_example, monkeypatch, forget_modules, register
):
    forget_modules("purchase_order", "purchase_order.workflow")
    monkeypatch.syspath_prepend(str(installed_example))
    register("reviewconsole.demo", "purchase_order")
    assert registry.current().problems == []
    assert [s.module for s in registry.current().sources] == ["reviewconsole.demo", "purchase_order"]
