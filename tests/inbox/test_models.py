"""Item rows: at most one pending row per wire id and session."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from reviewconsole.inbox.models import Item


def test_a_second_pending_row_for_one_interrupt_id_is_refused(start_review):
    _, interrupt = start_review()
    twin = Item(session=interrupt.session, interrupt_id=interrupt.interrupt_id, kind="input", queue=interrupt.queue)
    with pytest.raises(IntegrityError), transaction.atomic():
        twin.save()
    assert Item.objects.filter(interrupt_id=interrupt.interrupt_id).count() == 1


def test_a_resolved_row_may_share_its_id_with_a_new_pending_one(start_review):
    _, interrupt = start_review()
    Item.objects.filter(pk=interrupt.pk).update(status="resolved")
    Item.objects.create(
        session=interrupt.session, interrupt_id=interrupt.interrupt_id, kind="input", queue=interrupt.queue
    )
    assert Item.objects.filter(interrupt_id=interrupt.interrupt_id).count() == 2
