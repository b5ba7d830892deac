"""Fixtures of the client's tests: one served console for the module, a manager, API clients."""

from __future__ import annotations

import pytest
from reviewconsole_client import AsyncClient, Client

from tests.clients.served import TOKEN, Reviewer, serve_console


@pytest.fixture(scope="session")
def console(tmp_path_factory):
    running = serve_console(tmp_path_factory.mktemp("client-console"))
    yield running
    running.stop()


@pytest.fixture
def manager(console):
    person = Reviewer(console.url, "manager")
    yield person
    person.close()


@pytest.fixture
def client(console):
    with Client(console.url, TOKEN, backoff=0.05) as api:
        yield api


@pytest.fixture
async def aclient(console):
    async with AsyncClient(console.url, TOKEN, backoff=0.05) as api:
        yield api
