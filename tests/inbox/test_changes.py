"""The queues' change log: gap-free versions, and catching up with exactly what was missed (H7)."""

from __future__ import annotations

import json

import pytest

from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.inbox.items.selectors import queues_for
from reviewconsole.inbox.live.changes import MAX_CATCH_UP, changes_since, queue_changes_prune, queue_changes_record
from reviewconsole.inbox.models import Item, Queue, QueueChange


def _since(versions):
    return ",".join(f"{q}:{v}" for q, v in versions.items())


def test_every_change_gets_the_queues_next_version(start_review, manager, on_commit):
    support = Queue.objects.get(slug="support")
    assert support.version == 0
    _, first = start_review()
    _, second = start_review("No charger")
    with on_commit():
        interrupt_decide(interrupt=first, user=manager, action="approve")
    rows = list(QueueChange.objects.filter(queue=support).values_list("version", "event", "item_id"))
    assert rows == [
        (1, "interrupt.created", first.pk),
        (2, "interrupt.created", second.pk),
        (3, "interrupt.resolved", first.pk),
    ]
    support.refresh_from_db()
    assert support.version == 3


def test_h7_the_client_gets_exactly_what_it_missed_and_ends_as_a_fresh_load(
    client, manager, start_review, start_session, on_commit
):
    """H7: the socket is down while 3 items arrive (one from a tool inside an agent) and 1 is resolved."""
    _, before = start_review("Already waiting")
    client.force_login(manager)
    page = client.get("/inbox/")
    shown = {i.pk for i in page.context["items"]}
    versions = {int(q): v for q, v in page.context["live"]["versions"].items()}

    _, first = start_review("Screen cracked")
    _, second = start_review("Late delivery")
    _, [vip] = start_session("vip-discount", {"customer_id": "c123"})  # asked from a node used as a tool
    assert vip.node_path.startswith("customer_service_agent@1/calculate_discount@")
    with on_commit():
        interrupt_decide(interrupt=first, user=manager, action="approve")

    missed = client.get("/inbox/changes.json", {"since": _since(versions)}).json()
    assert missed["reset"] is False
    assert [(c["event"], c["item"]["id"]) for c in missed["changes"]] == [
        ("interrupt.created", first.pk),
        ("interrupt.created", second.pk),
        ("interrupt.created", vip.pk),
        ("interrupt.resolved", first.pk),
    ]
    for queue in {c["queue"] for c in missed["changes"]}:  # each queue's versions follow on, no gap
        got = [c["version"] for c in missed["changes"] if c["queue"] == queue]
        assert got == list(range(versions[queue] + 1, versions[queue] + 1 + len(got)))
    for change in missed["changes"]:  # what the page does with each
        if change["item"]["status"] == "pending":
            shown.add(change["item"]["id"])
        else:
            shown.discard(change["item"]["id"])
    fresh = {i["id"] for i in client.get("/inbox/items.json").json()["items"]}
    assert shown == fresh == {before.pk, second.pk, vip.pk}
    again = client.get("/inbox/changes.json", {"since": _since(missed["versions"])}).json()
    assert (again["changes"], again["reset"]) == ([], False)


def test_h19_an_item_created_while_the_page_loads_is_caught_up(client, manager, start_review):
    """H19: the page's versions are read before its list, so an item created after is not lost."""
    client.force_login(manager)
    page = client.get("/inbox/")
    assert list(page.context["items"]) == []
    _, item = start_review()  # between the page's list and its socket's hello
    since = _since(page.context["live"]["versions"])
    missed = client.get("/inbox/changes.json", {"since": since}).json()
    assert [(c["event"], c["item"]["id"]) for c in missed["changes"]] == [("interrupt.created", item.pk)]


def test_a_reviewer_only_ever_reads_changes_of_their_queues(client, outsider, manager, start_review):
    start_review()
    client.force_login(outsider)
    every = {q.pk: 0 for q in Queue.objects.all()}
    answer = client.get("/inbox/changes.json", {"since": _since(every)}).json()
    finance = Queue.objects.get(slug="finance").pk
    assert answer == {"changes": [], "versions": {str(finance): 0}, "reset": False}


@pytest.mark.parametrize("since", ["", "garbage", "3:x", "1:\u00b2", "\u00b2:1", "\u0663:1"])  # ², Arabic-Indic 3
def test_an_unreadable_since_asks_for_a_snapshot(client, manager, start_review, since):
    start_review()
    client.force_login(manager)
    assert client.get("/inbox/changes.json", {"since": since}).json()["reset"] is True


def test_too_much_missed_or_pruned_means_a_snapshot(demo, start_review, manager):
    _, item = start_review()
    support = Queue.objects.get(slug="support")
    queue_changes_record(changes=[(support.pk, "interrupt.claimed", item.pk)] * (MAX_CATCH_UP + 1))
    support.refresh_from_db()
    versions = {q.pk: q.version for q in Queue.objects.all()}
    assert changes_since(queues_for(manager), {**versions, support.pk: 0})["reset"] is True
    QueueChange.objects.filter(queue=support, version__lte=10).delete()
    assert changes_since(queues_for(manager), {**versions, support.pk: 5})["reset"] is True
    caught_up = changes_since(queues_for(manager), {**versions, support.pk: 20})
    assert (caught_up["reset"], len(caught_up["changes"])) == (False, support.version - 20)


def test_pruning_keeps_each_queues_newest_change(demo, start_review):
    import datetime as dt

    from django.utils import timezone

    _, item = start_review()
    QueueChange.objects.update(at=timezone.now() - dt.timedelta(days=30))
    assert queue_changes_prune() == 0  # the only change of support is its newest
    queue_changes_record(changes=[(item.queue_id, "interrupt.claimed", item.pk)])
    assert queue_changes_prune() == 1
    assert list(QueueChange.objects.values_list("event", flat=True)) == ["interrupt.claimed"]
    assert Item.objects.filter(pk=item.pk).exists()


def test_a_change_nobody_hears_is_not_built_and_one_a_reader_hears_is(demo, start_review, monkeypatch):
    """The in-memory layer with nobody in a queue's group: its changes cost no read, rendering or
    send (``group_sender.has_readers``); once a reader joins, the next change reaches it."""
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    from reviewconsole.inbox.live import messages

    built: list[list[int]] = []
    real = messages._publish_changes
    monkeypatch.setattr(messages, "_publish_changes", lambda ids: (built.append(ids), real(ids)))
    layer = get_channel_layer()
    support = Queue.objects.get(slug="support")
    start_review("Nobody is watching")
    assert built == []

    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(f"queue.{support.pk}", channel)
    try:
        _, item = start_review("A reviewer is watching")
        message = async_to_sync(layer.receive)(channel)
    finally:
        async_to_sync(layer.group_discard)(f"queue.{support.pk}", channel)
    assert len(built) == 1
    change = json.loads(message["text"])  # the change's JSON, made once for every listener
    assert (change["event"], change["item"]["id"]) == ("interrupt.created", item.pk)
