"""The crash property test (``tests/engine/test_crash_property.py``) over the console's ORM store.

The dead worker's lease is made to expire by moving ``lease_expires`` into the past, as time would.
"""

from __future__ import annotations

import datetime as dt
import logging

import pytest
from asgiref.sync import sync_to_async
from django.utils import timezone

from reviewconsole.workflow_sessions.models import WorkflowSession
from reviewconsole.workflow_sessions.store import OrmStore
from tests.engine.crash_shapes import SHAPES
from tests.engine.test_crash_property import WRITE_POINTS, Expire, check_every_write_point


def orm_store() -> tuple[OrmStore, Expire]:
    @sync_to_async
    def expire(session_id: str) -> None:
        past = timezone.now() - dt.timedelta(seconds=1)
        WorkflowSession.objects.filter(pk=session_id).update(lease_expires=past)

    return OrmStore(), expire


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("shape", sorted(SHAPES))
async def test_a_crash_at_any_write_point_on_the_orm_store_reruns_nothing_and_ends_the_same(shape, caplog):
    caplog.set_level(logging.CRITICAL, logger="engine")
    # At least the in-memory store's points: on the ORM store the parallel branches' agents may
    # each store their checkpoint before their model call (LlmAgent._model_turn) or have it merged
    # into a sibling's commit, as the threads interleave.
    assert await check_every_write_point(shape, orm_store, exact=False) >= WRITE_POINTS[shape]
