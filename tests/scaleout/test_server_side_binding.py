"""On PostgreSQL the console's connections bind parameters on the server (psycopg's ``Cursor``,
not Django's default ``ClientCursor``), so that psycopg prepares the statements a run repeats
(``settings.env.database``; measured in bench/README.md)."""

from __future__ import annotations

import psycopg
import pytest
from django.db import connection

pytestmark = pytest.mark.scaleout


def test_the_connection_binds_parameters_on_the_server(postgres):
    with connection.cursor() as cursor:
        assert not isinstance(cursor.cursor, psycopg.ClientCursor)
        cursor.execute("SELECT %s::int + 1", [41])
        assert cursor.fetchone() == (42,)
