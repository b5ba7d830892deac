"""What the inbox's text search finds, shared by the SQLite run (``test_search.py``) and the
PostgreSQL one (``tests/scaleout/test_inbox_search_index.py``, where the trigram index answers it)."""

from __future__ import annotations

from typing import Any

from reviewconsole.inbox.items.selectors import InboxFilters, inbox_page
from reviewconsole.inbox.models import Item, Queue
from tests.inbox.factories import make_items


def make_searchable(queues: dict[str, Queue]) -> dict[str, list[Item]]:
    """Items whose titles, messages and payload values the cases below search, plus filler."""
    make_items(queues["support"], 40, title="Routine question", message="Nothing special here")
    return {
        "vip": make_items(queues["sales"], 2, title="Discount for ACME", payload={"tier": "Gold VIP"}),
        "refund": make_items(queues["finance"], 1, title="Refund order o-4471", message="Card was charged twice"),
        "percent": make_items(queues["support"], 1, title="50% off_code", message="Asks about a code"),
        "folded": make_items(queues["support"], 1, title="Lieferung Hauptstraße", message="Flug nach İstanbul, Café"),
    }


def found(user: Any, q: str, **filters: Any) -> set[int]:
    """Ids of the items the inbox lists for the search ``q`` (as the page reads it: lower-cased, one space)."""
    return {i.pk for i in inbox_page(user, InboxFilters(q=q, **filters), size=100).items}


def assert_search_finds(user: Any, made: dict[str, list[Item]]) -> None:
    """Substrings anywhere (mid-word too), any case, in the title, the message or a payload value;
    ``%`` and ``_`` are literal; a search shorter than three characters still works; nothing else."""
    ids = {name: {row.pk for row in rows} for name, rows in made.items()}
    assert found(user, "gold vip") == ids["vip"]
    assert found(user, "OLD V") == ids["vip"]
    assert found(user, "acme") == ids["vip"]
    assert found(user, "o-4471") == ids["refund"]
    assert found(user, "charged tw") == ids["refund"]
    assert found(user, "50%") == ids["percent"]
    assert found(user, "f_c") == ids["percent"]
    assert found(user, "_") == ids["percent"]
    assert found(user, "o-") == ids["refund"]
    assert found(user, "o-4472") == set()
    assert found(user, "gold vip", queue="finance") == set()
    # Case and accents folded alike in the text and the query (found in a trial: "STRASSE" and
    # "istanbul" found nothing).
    for typed in ("HAUPTSTRASSE", "hauptstraße", "istanbul", "İSTANBUL", "cafe", "CAFÉ"):
        assert found(user, typed) == ids["folded"], typed
