"""The first run on a fresh clone, served (issue 17), as a person follows the README.

``manage.py serve`` runs as a subprocess on a throwaway database prepared as ``./run`` does
(``migrate``, ``demo --seed``), with no ``DEMO_WEBHOOK_SECRET`` nor ``DEMO_PASSWORD`` (a fresh
clone: the console generates both) and ``DEMO_API_TOKEN`` set (the README's AG-UI steps restart
with it). Then: the seeded requests wait in the inbox, one of each kind; the README's curl recipe,
run by bash as written, starts a session; ``examples/agui/review.mjs`` run by node prints the
events and ends the session; a wrong token gets a message that says so.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from reviewconsole.console.seed import SEEDS
from tests.browser.test_main_job import ARTIFACTS, MANAGE_DEADLINE, START_DEADLINE, Console, _free_port, _manage

pytestmark = pytest.mark.browser  # a real server, bash, curl and node: slow, skipped with -m "not browser"

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "agui"
TOKEN = "rc_first-run-example-token-0123456789abcdefghijkl"
WAIT_SECONDS = 120  # a guard: each condition below is polled until it holds


@pytest.fixture(scope="module")
def console(tmp_path_factory):
    ARTIFACTS.mkdir(exist_ok=True)
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DEMO_WEBHOOK_SECRET", "DEMO_PASSWORD", "DEMO_API_TOKEN")
    }
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "reviewconsole.settings.embedded",
            "REVIEWCONSOLE_VAR_DIR": str(tmp_path_factory.mktemp("first-run") / "var"),
            "DEMO_API_TOKEN": TOKEN,
            "PYTHONUNBUFFERED": "1",
            "REVIEWCONSOLE_NOTIFY_EMAIL": "0",
        }
    )
    _manage(env, "migrate", "--no-input")
    _manage(env, "demo", "--seed")
    server = Console(env, _free_port(), ARTIFACTS / "first-run-console.log")
    try:
        assert server.ready.wait(START_DEADLINE), f"the console did not start; see {server.log}"
        yield server
    finally:
        server.stop()


def _pending(console) -> list[dict]:
    response = httpx.get(f"{console.url}/api/v1/interrupts", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200, response.text
    return response.json()["interrupts"]


def test_the_first_run_leaves_one_request_of_each_kind_waiting(console):
    deadline = time.monotonic() + WAIT_SECONDS
    while len(pending := _pending(console)) < len(SEEDS) and time.monotonic() < deadline:
        time.sleep(0.2)  # the worker runs the seeded sessions to their first request
    assert sorted(i["workflow"] for i in pending) == sorted(workflow for workflow, _ in SEEDS)


def _readme_block(marker: str) -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", readme, flags=re.DOTALL)
    [block] = [b for b in blocks if marker in b]
    return block


def test_the_readme_s_curl_recipe_works_as_written_on_a_fresh_clone(console):
    recipe = _readme_block("openssl dgst")
    assert "manage.py webhook_secret email-review" in recipe  # the secret is read, not chosen beforehand
    # As written, but served where this test serves it and with this interpreter for .venv/bin/python.
    script = recipe.replace("http://127.0.0.1:8000", console.url).replace(".venv/bin/python", sys.executable)
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=ROOT,
        env=console.env,
        capture_output=True,
        text=True,
        timeout=MANAGE_DEADLINE,
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert set(answer) >= {"session_id", "session_url", "url"}, answer


def _node_example(console, token: str) -> subprocess.CompletedProcess[str]:
    node = shutil.which("node")
    assert node, "Node 20 is needed for the AG-UI example"
    if not (EXAMPLE / "node_modules" / "@ag-ui" / "client").is_dir():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=EXAMPLE, check=True, timeout=300)
    return subprocess.run(
        [node, "review.mjs"],
        cwd=EXAMPLE,
        env={**os.environ, "CONSOLE_URL": console.url, "DEMO_API_TOKEN": token},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_ag_ui_example_runs_as_written_and_prints_the_events(console):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "cd examples/agui && npm ci" in readme and "node review.mjs" in readme
    package = json.loads((EXAMPLE / "package.json").read_text(encoding="utf-8"))
    assert package["type"] == "module" and "@ag-ui/client" in package["dependencies"]

    done = _node_example(console, TOKEN)
    (ARTIFACTS / "agui-example.log").write_text(done.stdout + done.stderr, encoding="utf-8")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("RUN_STARTED  run ")
    assert [line for line in lines if line.startswith("RUN_FINISHED")] == [
        "RUN_FINISHED  outcome interrupt",
        "RUN_FINISHED  outcome interrupt",
        "RUN_FINISHED  outcome success",
    ]
    assert "STEP_STARTED  email_review@1/draft_email@2" in lines  # feedback brought a second draft
    assert "Draft approved and sent successfully." in lines
    assert lines[-1] == "→ done: the second draft was approved and sent"


def test_a_wrong_token_is_told_that_the_token_is_wrong(console):
    done = _node_example(console, "rc_not-the-demo-token")
    assert done.returncode == 1
    assert "The console refused the run: The API token is wrong" in done.stderr
    assert "RUN_STARTED" not in done.stdout
