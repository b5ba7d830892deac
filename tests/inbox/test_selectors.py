"""What a user may see: the queues of their groups, never more."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User

from reviewconsole.inbox.items.selectors import inbox_items_for, queues_for, visible_interrupts_for
from reviewconsole.inbox.models import Queue


def test_a_member_sees_the_queues_of_their_groups(outsider):
    assert [q.slug for q in queues_for(outsider)] == ["finance"]


def test_a_superuser_sees_every_queue(demo):
    admin = User.objects.create_superuser("root", password="x")
    assert queues_for(admin).count() == Queue.objects.count() > 0


def test_anonymous_and_groupless_users_see_nothing(demo, start_review):
    start_review()
    nobody = User.objects.create_user("nobody", password="x")
    for user in (AnonymousUser(), nobody):
        assert list(queues_for(user)) == []
        assert list(visible_interrupts_for(user)) == []


def test_the_inbox_holds_pending_items_only(manager, start_review, on_commit):
    from reviewconsole.inbox.items.decisions import interrupt_decide

    _, first = start_review()
    _, second = start_review("The charger is missing")
    with on_commit():
        interrupt_decide(interrupt=first, user=manager, action="reject", reason="off topic")
    assert [i.pk for i in inbox_items_for(manager)] == [second.pk]
    assert {i.pk for i in visible_interrupts_for(manager)} == {first.pk, second.pk}
