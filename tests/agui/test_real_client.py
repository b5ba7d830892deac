"""The AG-UI endpoint against the reference client, @ag-ui/client 1.0, over real HTTP.

``manage.py serve`` runs as a subprocess (as in the browser test) on a throwaway database with
the demo data; ``DEMO_API_TOKEN`` gives the ``demo`` API client a known token. Then
``tests/agui/client/conformance.mjs`` (Node 20) drives it with HttpAgent, whose schema
enforcement and sequence verification fail any run that breaks AG-UI 1.0: a plain run, the email
review's two interrupts, a tool approval, the support handoff, a resume by checkpoint id, a
cancel and the refusals. The test fails when the script fails. ``.ci/run`` installs the
client with ``npm ci``; without node_modules this test does it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.browser.test_main_job import ARTIFACTS, START_DEADLINE, Console, _free_port, _manage
from tests.conftest import DEMO_PASSWORD, DEMO_SECRET

pytestmark = pytest.mark.browser  # a real server and a second runtime: slow, skipped with -m "not browser"

CLIENT = Path(__file__).resolve().parent / "client"
TOKEN = "rc_agui-conformance-token-0123456789abcdefghijkl"
ENSURE_CLIENT = f"""
from reviewconsole.api.models import ApiClient, hash_token
if not ApiClient.objects.filter(token_hash=hash_token({TOKEN!r})).exists():
    client = ApiClient(name="agui-conformance", workflows=["*"])
    client.set_token({TOKEN!r})
    client.save()
"""


@pytest.fixture
def console(tmp_path):
    ARTIFACTS.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "reviewconsole.settings.embedded",
        "REVIEWCONSOLE_VAR_DIR": str(tmp_path / "var"),
        "DEMO_PASSWORD": DEMO_PASSWORD,
        "DEMO_WEBHOOK_SECRET": DEMO_SECRET,
        "DEMO_API_TOKEN": TOKEN,
        "PYTHONUNBUFFERED": "1",
    }
    _manage(env, "migrate", "--no-input")
    _manage(env, "demo")
    _manage(env, "shell", "-c", ENSURE_CLIENT)  # when demo makes no client from DEMO_API_TOKEN
    server = Console(env, _free_port(), ARTIFACTS / "agui-console.log")
    try:
        assert server.ready.wait(START_DEADLINE), f"the console did not start; see {server.log}"
        yield server
    finally:
        server.stop()


def test_the_reference_client_accepts_every_run(console):
    node = shutil.which("node")
    assert node, "Node 20 is needed for the AG-UI conformance client"
    if not (CLIENT / "node_modules" / "@ag-ui" / "client").is_dir():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=CLIENT, check=True, timeout=300)
    result = subprocess.run(
        [node, "conformance.mjs"],
        cwd=CLIENT,
        env={**os.environ, "AGUI_URL": console.url, "AGUI_TOKEN": TOKEN},
        capture_output=True,
        text=True,
        timeout=300,
    )
    (ARTIFACTS / "agui-conformance.log").write_text(result.stdout + result.stderr, encoding="utf-8")
    print(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert "7 passed, 0 failed" in result.stdout
