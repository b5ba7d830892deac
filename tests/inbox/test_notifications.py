"""New-item mails are recorded per person, so a notification run again sends nobody a second one."""

from __future__ import annotations

from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviewconsole.inbox.mail.notifications import notify_members
from reviewconsole.inbox.models import NotificationSent, Queue
from reviewconsole.inbox.tasks import notify_new_item
from tests.inbox.smtp_receiver import SmtpReceiver

MEMBERS = [["manager@example.com"], ["reviewer@example.com"]]  # the demo's support queue


def _recorded(item, queue=None):
    rows = NotificationSent.objects.filter(item=item, queue=queue or item.queue)
    return sorted(rows.values_list("user__username", flat=True))


def test_each_send_is_recorded_and_a_run_again_sends_nothing(start_review):
    mail.outbox.clear()
    _, item = start_review()
    assert sorted(m.to for m in mail.outbox) == MEMBERS
    assert _recorded(item) == ["manager", "reviewer"]
    assert notify_new_item.call(item.pk) == 0
    assert len(mail.outbox) == 2


def test_each_send_is_recorded_in_one_statement(start_review):
    """Issue 18 target 4: a record was read, then written under a savepoint (4 statements per person)."""
    _, item = start_review()
    NotificationSent.objects.filter(item=item).delete()
    with CaptureQueriesContext(connection) as captured:
        assert notify_members(item) == 2
    writes = [q["sql"] for q in captured.captured_queries if "inbox_notificationsent" in q["sql"]]
    assert len(writes) == 3  # the people not yet told (a subquery), then one insert per person
    assert all(sql.startswith("INSERT") for sql in writes[1:])
    assert not any(q["sql"].startswith("SAVEPOINT") for q in captured.captured_queries)
    assert _recorded(item) == ["manager", "reviewer"]


def test_a_run_cut_off_after_some_sends_mails_only_the_rest(start_review):
    _, item = start_review()
    NotificationSent.objects.filter(item=item, user__username="reviewer").delete()  # cut off before it
    mail.outbox.clear()
    assert notify_members(item) == 1
    assert [m.to for m in mail.outbox] == [["reviewer@example.com"]]
    assert _recorded(item) == ["manager", "reviewer"]


def test_an_escalated_item_is_announced_again_in_its_new_queue(start_review):
    _, item = start_review()
    support = item.queue
    item.queue = Queue.objects.exclude(pk=support.pk).first()
    item.save(update_fields=["queue"])
    mail.outbox.clear()
    assert notify_members(item) == 1  # manager is in every demo queue, reviewer in support only
    assert [m.to for m in mail.outbox] == [["manager@example.com"]]
    assert _recorded(item) == ["manager"]
    assert _recorded(item, support) == ["manager", "reviewer"]


def _queued_while(start):
    from django.tasks.signals import task_enqueued

    queued = []

    def record(sender, task_result, **kwargs):
        queued.append(task_result.task.module_path)

    task_enqueued.connect(record)
    try:
        start()
    finally:
        task_enqueued.disconnect(record)
    return queued


def test_no_notification_task_is_queued_while_new_item_mails_are_off(start_review, settings):
    settings.REVIEWCONSOLE = {**settings.REVIEWCONSOLE, "NOTIFY_EMAIL": False}
    mail.outbox.clear()
    queued = _queued_while(start_review)
    assert notify_new_item.module_path not in queued
    assert "reviewconsole.workflow_sessions.tasks.run_session" in queued  # the signal was heard
    assert mail.outbox == []


def test_a_notification_task_is_queued_while_new_item_mails_are_on(start_review):
    assert notify_new_item.module_path in _queued_while(start_review)


def test_each_recipient_reads_the_money_in_their_locale(start_session):
    from django.contrib.auth.models import User

    from reviewconsole.preferences.models import Preference
    from tests.conftest import make_outsider

    german = make_outsider("ines")
    german.email = "ines@example.com"
    german.save()
    Preference.objects.create(user=german, locale="de-DE", locale_chosen=True)
    Preference.objects.create(user=User.objects.get(username="manager"), locale="en-GB")
    mail.outbox.clear()
    start_session("refund-approval", {"order_id": "A-17", "amount": 1250, "reason": "Arrived broken"})
    sent = {m.to[0]: m for m in mail.outbox}
    assert sent["ines@example.com"].subject.endswith("Refund 1.250,00\u00a0$ for order A-17 — Arrived broken")
    assert "Refund 1.250,00\u00a0$ for order A-17" in sent["ines@example.com"].body
    assert "Refund US$1,250.00 for order A-17" in sent["manager@example.com"].body
    assert "1.250,00" not in sent["manager@example.com"].body


def _over_smtp(settings, server):
    backend = "django.core.mail.backends.smtp.EmailBackend"
    settings.MAILERS = {"default": {"BACKEND": backend, "OPTIONS": {"host": "127.0.0.1", "port": server.port}}}


def test_an_items_mails_go_through_one_smtp_session(start_review, settings):
    _, item = start_review()
    NotificationSent.objects.filter(item=item).delete()
    server = SmtpReceiver().start()
    try:
        _over_smtp(settings, server)
        assert notify_members(item) == 2
    finally:
        server.stop()
    assert sorted(recipients for recipients, _ in server.received) == MEMBERS
    assert len(set(server.peers)) == 1


def test_a_refused_address_does_not_stop_the_others_on_the_same_session(start_review, settings):
    _, item = start_review()
    NotificationSent.objects.filter(item=item).delete()
    server = SmtpReceiver(refuse=frozenset({"manager@example.com"})).start()
    try:
        _over_smtp(settings, server)
        assert notify_members(item) == 1
    finally:
        server.stop()
    assert [recipients for recipients, _ in server.received] == [["reviewer@example.com"]]
    assert _recorded(item) == ["reviewer"]


def test_a_mail_server_out_of_reach_sends_nothing_and_records_nothing(start_review, settings):
    _, item = start_review()
    NotificationSent.objects.filter(item=item).delete()
    server = SmtpReceiver().start()
    server.stop()  # its port is closed now
    _over_smtp(settings, server)
    assert notify_members(item) == 0
    assert _recorded(item) == []
