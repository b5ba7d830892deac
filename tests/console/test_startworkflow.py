"""``manage.py startworkflow``: a workflow package whose generated test passes as generated."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest
from django.core.management import CommandError, call_command


def _start(*args: str) -> str:
    out = io.StringIO()
    call_command("startworkflow", *args, stdout=out)
    return out.getvalue()


def test_the_package_is_written_and_its_registration_printed(tmp_path):
    output = _start("expense-claim", "--directory", str(tmp_path))
    package = tmp_path / "expense_claim"
    assert sorted(p.relative_to(package).as_posix() for p in package.rglob("*.py")) == [
        "__init__.py",
        "tests/__init__.py",
        "tests/test_workflow.py",
        "workflow.py",
    ]
    assert 'name="expense-claim"' in (package / "__init__.py").read_text()
    assert f"PYTHONPATH={tmp_path} REVIEWCONSOLE_WORKFLOWS=reviewconsole.demo,expense_claim ./run" in output
    assert f"  ./test {tmp_path}/expense_claim\n" in output  # ./run installs no pytest: ./test does


def test_the_generated_test_passes_as_generated_without_django(tmp_path):
    _start("expense-claim", "--directory", str(tmp_path))
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "expense_claim"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout


def test_the_generated_spec_builds_a_valid_workflow(tmp_path, monkeypatch):
    _start("leave-request", "--directory", str(tmp_path))
    monkeypatch.syspath_prepend(str(tmp_path))
    import leave_request

    [spec] = leave_request.WORKFLOWS
    assert (spec.name, spec.queue) == ("leave-request", "leave-request")
    assert spec.build(None).name == "leave_request"
    assert spec.input_schema.model_json_schema()["required"] == ["subject"]
    sys.modules.pop("leave_request", None)
    sys.modules.pop("leave_request.workflow", None)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("Expense_Claim", "is not a workflow name"),
        ("expense--claim", "is not a workflow name"),
        ("email", "A module named 'email' exists already"),
        ("class", "is a Python keyword"),
    ],
)
def test_a_name_that_cannot_be_used_is_refused_and_nothing_written(tmp_path, name, message):
    with pytest.raises(CommandError, match=message):
        _start(name, "--directory", str(tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_the_name_of_a_registered_workflow_is_refused_naming_it(tmp_path):
    registered = r"A workflow named 'email-review' is registered already \(by reviewconsole\.demo"
    with pytest.raises(CommandError, match=registered):
        _start("email-review", "--directory", str(tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_an_existing_folder_is_not_overwritten(tmp_path):
    (tmp_path / "expense_claim").mkdir()
    (tmp_path / "expense_claim" / "mine.py").write_text("KEEP = 1\n")
    with pytest.raises(CommandError, match="exists already; nothing was written"):
        _start("expense-claim", "--directory", str(tmp_path))
    assert [p.name for p in (tmp_path / "expense_claim").iterdir()] == ["mine.py"]
