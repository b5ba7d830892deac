"""Store factories for the store contract suite (``test_store_contract.py``).

Each factory takes pytest's ``request`` (so it can ask for fixtures such as ``db`` with
``request.getfixturevalue``) and returns a fresh, empty :class:`engine.Store`. To run the suite
over another store, append ``pytest.param(factory, id="name")`` to :data:`STORE_FACTORIES`.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine import InMemoryStore, Store


def in_memory(request: Any) -> Store:
    return InMemoryStore()


def orm(request: Any) -> Store:
    """The console's ORM store on the test database (committed transactions: the store runs on threads)."""
    from reviewconsole.workflow_sessions.store import OrmStore

    return OrmStore()


STORE_FACTORIES: list[Any] = [
    pytest.param(in_memory, id="memory"),
    pytest.param(orm, id="orm", marks=pytest.mark.django_db(transaction=True)),
]
