"""Unsaved model instances of one model inserted in plain SQL: one statement, no query building.

``Model.save()`` builds its ``INSERT`` through the ORM's compiler on every call (about half a
millisecond for the inbox's item row, a third of a new item's relay in ``bench.ours``);
``django_tasks_db``'s ``enqueue`` does so once per task row. :func:`insert_instances` writes the
rows the same way the ORM does (each concrete field's ``pre_save(obj, add=True)``, so
``auto_now_add`` stamps and defaults hold, then ``get_db_prep_save``), in one multi-row
``INSERT … RETURNING`` of the primary key when the database assigns it (SQLite 3.35+ and
PostgreSQL), sets each instance's primary key and saved state, and sends ``pre_save`` and
``post_save`` (``created=True``) for each, as ``save()`` does (``django_tasks_db`` fills a task
row's ``run_after`` in a ``pre_save`` receiver).

What it skips: a model's ``save()`` override, and ``save()``'s own transaction around a
multi-table or parent-link save (so: concrete models without parents only; callers use it only
for models with no ``save()`` override, said at each call site). Nothing here commits: callers
run it inside their transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connection, transaction
from django.db.models import Model
from django.db.models.signals import post_save, pre_save

__all__ = ["insert_instances"]


def insert_instances(objs: Sequence[Model], *, unless_taken: str | None = None) -> bool:
    """Insert ``objs`` (unsaved instances of one model, at least one) in one statement; set their
    primary keys (when the database assigns them) and mark them saved.

    ``unless_taken``: the name of a unique field; a row whose value there is taken already is
    not written (``ON CONFLICT … DO NOTHING``, SQLite 3.24+ and PostgreSQL), instead of a read
    beforehand. One row at a time, with a key the database assigns.

    Returns:
        Whether the rows were written (False: ``unless_taken`` found the value taken; the
        instance stays unsaved and no ``post_save`` is sent).

    Raises:
        IntegrityError: a constraint refused a row (nothing of the statement is written).
        ValueError: ``objs`` is empty, mixes models, or is of a model with a parent;
            ``unless_taken`` with more than one row, a key given, or a field that is not unique.
    """
    if not objs:
        raise ValueError("insert_instances: no rows")
    model = type(objs[0])
    if any(type(obj) is not model for obj in objs):
        raise ValueError("insert_instances: one model per statement")
    if model._meta.parents:
        raise ValueError("insert_instances: a model with a parent is saved table by table (save())")
    meta = model._meta
    pk = meta.pk
    assert pk is not None
    conflict = None if unless_taken is None else meta.get_field(unless_taken)
    # Only a key the database returns tells whether the row was written.
    returned = len(objs) == 1 and objs[0].pk is None and pk.db_returning
    if conflict is not None and not (returned and conflict.unique):
        raise ValueError("insert_instances: unless_taken needs one row, a key the database assigns and a unique field")
    for obj in objs:
        pre_save.send(sender=model, instance=obj, raw=False, using=connection.alias, update_fields=None)
    auto = pk.db_returning and all(obj.pk is None for obj in objs)  # the database draws the keys
    fields = [f for f in meta.local_concrete_fields if not (auto and f is pk)]
    params: list[Any] = []
    for obj in objs:
        params += [f.get_db_prep_save(f.pre_save(obj, True), connection) for f in fields]
    quote = connection.ops.quote_name
    columns = ", ".join(quote(f.column) for f in fields)
    marks = "(" + ", ".join(["%s"] * len(fields)) + ")"
    sql = f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES {', '.join([marks] * len(objs))}"  # noqa: S608 (names from the model, values as parameters)
    if conflict is not None:
        sql += f" ON CONFLICT ({quote(conflict.column)}) DO NOTHING"
    if auto:
        sql += f" RETURNING {quote(pk.column)}"
    # As save(): a failed insert marks the atomic block for rollback, so a caller that catches the
    # error inside it cannot go on as if the statement had run.
    with transaction.mark_for_rollback_on_error(connection.alias), connection.cursor() as cursor:
        cursor.execute(sql, params)
        if auto:
            # Keys are assigned in VALUES order (as Django's bulk_create relies on).
            keys = sorted(row[0] for row in cursor.fetchall())
            if not keys and conflict is not None:
                return False
            for obj, key in zip(objs, keys, strict=True):
                obj.pk = pk.to_python(key)
    for obj in objs:
        obj._state.adding = False
        obj._state.db = connection.alias
        post_save.send(sender=model, instance=obj, created=True, update_fields=None, raw=False, using=connection.alias)
    return True
