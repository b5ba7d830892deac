"""The client's pages: every ``python`` block compiles, and each adapter is shown in under 30 lines."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["docs/clients.md", "docs/adapters/adk.md", "docs/adapters/langgraph.md", "docs/adapters/openai-agents.md"]


def blocks(page: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", (ROOT / page).read_text(encoding="utf-8"), re.S | re.M)


@pytest.mark.parametrize("page", PAGES)
def test_the_python_blocks_compile(page):
    found = blocks(page)
    assert found
    for code in found:
        compile(code, page, "exec")


@pytest.mark.parametrize("page", PAGES[1:])
def test_an_adapter_is_shown_in_under_30_lines(page):
    [code] = blocks(page)
    assert len(code.splitlines()) < 30


def test_the_readme_points_to_the_pages():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in PAGES:
        assert f"({page})" in readme
