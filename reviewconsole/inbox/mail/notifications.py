"""New-item emails to the members of the item's queue, each linking to the item.

Sent through Django's mail API (the ``default`` mailer: the console backend on the embedded
default, locmem in tests). A link opens the item's page; it never decides anything. Money and
numbers in a mail are in its recipient's locale (their preferences, ``en-US`` when none is
saved): the mail is written once per locale among the recipients, not once per recipient. An
item's mails go through one connection to the mail server (one SMTP session, not one per person).
"""

from __future__ import annotations

import logging
from contextlib import suppress

from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage, mailers
from django.db.models import Q

from ...preferences.locales import override
from ...preferences.services import locales_of
from ..conf import inbox_setting
from ..models import Item, NotificationSent
from ..pages.headings import heading

logger = logging.getLogger("reviewconsole.inbox")

__all__ = ["item_url", "notify_members"]


def item_url(item: Item) -> str:
    """The absolute address of the item's page (``BASE_URL`` + its path)."""
    return f"{str(inbox_setting('BASE_URL')).rstrip('/')}/inbox/items/{item.pk}/"


def notify_members(item: Item) -> int:
    """Email every active member (reviewer or manager) of ``item``'s queue who has an address.

    One message per person (nobody sees the others' addresses). Returns how many were sent.
    Each send is recorded (:class:`~.models.NotificationSent`) and the people already recorded
    for this item in this queue are skipped, so a run again after a crash mails only those it had
    not reached (one whose send was cut off before its record may get it twice: at least once).
    """
    if not inbox_setting("NOTIFY_EMAIL"):
        return 0
    queue = item.queue
    groups = [g for g in (queue.group_id, queue.managers_id) if g]
    people = list(
        get_user_model()
        .objects.filter(Q(groups__in=groups), is_active=True)
        .exclude(email="")
        .exclude(pk__in=NotificationSent.objects.filter(item=item, queue=queue).values("user_id"))
        .distinct()
        .order_by("pk")
    )
    if not people:
        return 0
    locales = locales_of([person.pk for person in people])
    written: dict[str, tuple[str, str]] = {}
    sent = 0
    mailer = mailers.default
    with suppress(Exception):  # a server out of reach: each send below opens its own, and says why it failed
        mailer.open()
    try:
        for person in people:
            locale = locales[person.pk]
            if locale not in written:
                written[locale] = _mail(item, locale)
            subject, body = written[locale]
            try:
                delivered = mailer.send_messages([EmailMessage(subject, body, to=[person.email])])
            except Exception:  # one bad address or a mail server hiccup must not stop the others
                logger.exception("Could not email %s about item %s", person.pk, item.pk)
                mailer.close()  # the session may be broken: the next send opens a new one
                continue
            if delivered:
                # One statement (a record already there, from a run racing this one, stays).
                sent_once = NotificationSent(item=item, queue=queue, user=person)
                NotificationSent.objects.bulk_create([sent_once], ignore_conflicts=True)
                sent += delivered
    finally:
        mailer.close()
    return sent


def _mail(item: Item, locale: str) -> tuple[str, str]:
    """The ``(subject, body)`` of ``item``'s mail, its money and numbers in ``locale``."""
    with override(locale):
        title = heading(item).title[:120]  # named as its row in the inbox names it
    queue = item.queue
    due = f"\nDue: {item.due_at:%Y-%m-%d %H:%M} UTC\n" if item.due_at else ""
    body = (
        f"A new request is waiting in the {queue.name} queue.\n\n"
        f"{title}\n{due}\n"
        f"Open it: {item_url(item)}\n\n"
        "(The link opens the request; it does not decide anything.)\n"
    )
    return f"[reviewconsole] New request in {queue.name}: {title}", body
