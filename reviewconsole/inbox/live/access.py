"""The inbox sockets' access re-checks, batched: one thread-pool job checks every socket that
asked in the same moment, not one job each.

A new item reaches every reviewer's socket at once, and each socket whose last check is older
than ``ACCESS_RECHECK_SECONDS`` checks again before forwarding it (``consumers._may_watch``): at a
thousand sockets, a thousand thread-pool hops, each opening and closing a database connection,
queued behind six pool threads, took over a minute on the embedded default
(``bench/bench_fanout.py``). Here the checks asked while a job is pending or running wait for the
next job, which confirms the logins that still hold in a few queries for all of them, and
checks any other one as Django does (:func:`queues_now`, ``auth.get_user``).
"""

from __future__ import annotations

import asyncio
import functools
import weakref
from importlib import import_module
from types import SimpleNamespace
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib import auth
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.contrib.sessions.models import Session
from django.utils import timezone
from django.utils.crypto import constant_time_compare

from ..items.selectors import queues_for
from ..models import Queue

__all__ = ["checked_queues", "queues_now"]

Login = tuple[str, int]
"""``(session key, user id)`` of a socket."""


def queues_now(session_key: str, user_id: int) -> set[int] | None:
    """The ids of the queues the socket's user is in now, or None when its login ended (logged
    out, session expired or flushed, password changed, user deactivated)."""
    if not session_key:
        return None
    session = import_module(settings.SESSION_ENGINE).SessionStore(session_key=session_key)
    user = auth.get_user(SimpleNamespace(session=session))  # Django's checks, as for a page
    if not user.is_authenticated or user.pk != user_id:
        return None
    return set(queues_for(user).values_list("pk", flat=True))


_DB_SESSIONS = "django.contrib.sessions.backends.db"
_MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


def _check_all(logins: list[Login]) -> dict[Login, set[int] | None]:
    """:func:`queues_now` of every login, read in a few queries for all of them.

    The common case, a login that still holds (its database session unexpired, the model backend,
    an active user, the session's hash that of the user's password now), is confirmed here in bulk:
    sessions, users, their groups and the queues in one query each. Anything else (another session
    engine or backend, a session gone, a hash that differs) goes through :func:`queues_now`, i.e.
    Django's ``auth.get_user`` with its side effects (a session on an old secret is cycled, one
    whose hash no longer matches is flushed).
    """
    found: dict[Login, set[int] | None] = {}
    if settings.SESSION_ENGINE == _DB_SESSIONS and _MODEL_BACKEND in settings.AUTHENTICATION_BACKENDS:
        rows = Session.objects.filter(session_key__in={key for key, _ in logins}, expire_date__gt=timezone.now())
        sessions = {key: _decoded(data) for key, data in rows.values_list("session_key", "session_data")}
        users = {  # rows, not model instances: a thousand logins are checked at once
            pk: (is_active, is_superuser, password)
            for pk, is_active, is_superuser, password in get_user_model()
            .objects.filter(pk__in={user_id for _, user_id in logins})
            .values_list("pk", "is_active", "is_superuser", "password")
        }
        memberships = get_user_model().groups.through.objects.filter(user_id__in=list(users))
        groups: dict[int, set[int]] = {}
        for user_id, group_id in memberships.values_list("user_id", "group_id"):
            groups.setdefault(user_id, set()).add(group_id)
        queues = list(Queue.objects.values_list("pk", "group_id", "managers_id"))
        for key, user_id in logins:
            data, user = sessions.get(key), users.get(user_id)
            if data is None or user is None:
                continue
            is_active, is_superuser, password = user
            if not is_active:
                continue
            if str(data.get(SESSION_KEY)) != str(user_id) or data.get(BACKEND_SESSION_KEY) != _MODEL_BACKEND:
                continue
            if not constant_time_compare(data.get(HASH_SESSION_KEY) or "", _auth_hash(password)):
                continue
            mine = groups.get(user_id, set())
            found[(key, user_id)] = {
                pk for pk, group, managers in queues if is_superuser or group in mine or managers in mine
            }
    return {login: found[login] if login in found else queues_now(*login) for login in logins}


@functools.lru_cache(maxsize=4096)
def _decoded(session_data: str) -> dict[str, Any]:
    """A database session's data as Django decodes it (its signature checked), read once per
    distinct stored value: a socket's session row rarely changes between two checks, and a check
    of a thousand sockets spent most of its time here. The same string decodes the same way; a
    changed session is a new string. Not to be changed by the caller."""
    return dict(import_module(_DB_SESSIONS).SessionStore().decode(session_data))


@functools.lru_cache(maxsize=4096)
def _auth_hash(password: str) -> str:
    """``AbstractBaseUser.get_session_auth_hash`` of a user whose password hash is ``password``
    (it depends on nothing else), computed once per distinct value."""
    return str(get_user_model()(password=password).get_session_auth_hash())


class _Batch:
    """The checks waiting on one event loop for the next job."""

    def __init__(self) -> None:
        self.waiting: dict[Login, list[asyncio.Future[set[int] | None]]] = {}
        self.job: asyncio.Task[None] | None = None

    async def run(self) -> None:
        while self.waiting:
            batch, self.waiting = self.waiting, {}
            try:
                # A thread-pool thread, not the one Django's sync views share (see consumers._read).
                found = await database_sync_to_async(_check_all, thread_sensitive=False)(list(batch))
            except Exception as exc:  # every socket of the job fails as its own check would have
                for futures in batch.values():
                    for future in futures:
                        if not future.done():
                            future.set_exception(exc)
                continue
            for login, futures in batch.items():
                for future in futures:
                    if not future.done():
                        future.set_result(found[login])
        self.job = None


_batches: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Batch] = weakref.WeakKeyDictionary()


async def checked_queues(session_key: str, user_id: int) -> set[int] | None:
    """:func:`queues_now` for one socket, run in the next batch of this event loop."""
    loop = asyncio.get_running_loop()
    batch = _batches.setdefault(loop, _Batch())
    future: asyncio.Future[set[int] | None] = loop.create_future()
    batch.waiting.setdefault((session_key, user_id), []).append(future)
    if batch.job is None:
        batch.job = loop.create_task(batch.run())
    return await future
