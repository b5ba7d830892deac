"""Reads for the inbox: what a user may see, always limited to the queues of their groups."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet

from .models import Interrupt, InterruptStatus, Queue

__all__ = ["inbox_items_for", "queues_for", "visible_interrupts_for"]


def queues_for(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Queue]:
    """Queues whose group the user belongs to (all of them for superusers)."""
    if not user.is_authenticated:
        return Queue.objects.none()
    if user.is_superuser:
        return Queue.objects.all()
    return Queue.objects.filter(group__in=user.groups.all())


def visible_interrupts_for(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Interrupt]:
    """Every interrupt (any status) in the user's queues."""
    return Interrupt.objects.filter(queue__in=queues_for(user)).select_related("queue", "session")


def inbox_items_for(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Interrupt]:
    """Pending items of the user's queues, oldest first."""
    return visible_interrupts_for(user).filter(status=InterruptStatus.PENDING).order_by("created_at", "id")
