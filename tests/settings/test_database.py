"""``DATABASES["default"]`` from ``DATABASE_URL`` (``settings.env.database``): SQLite's embedded
default without it; on PostgreSQL a bounded lock wait, a connection pool, and psycopg's
server-side binding (the statements a run repeats are prepared once per connection; measured in
bench/README.md)."""

from __future__ import annotations

import pytest

from reviewconsole.settings import env as settings_env

DEFAULT = {"ENGINE": "django.db.backends.sqlite3", "NAME": "embedded.sqlite3"}


def test_without_database_url_the_default_stands(monkeypatch):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    assert settings_env.database(dict(DEFAULT)) == DEFAULT


def test_a_postgres_url_binds_parameters_on_the_server_and_bounds_lock_waits(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgres://rc:secret@db.internal:5432/rc")
    monkeypatch.setenv("DB_LOCK_TIMEOUT_MS", "1500")
    monkeypatch.delenv("DB_POOL_MAX_SIZE", raising=False)
    config = settings_env.database(dict(DEFAULT))
    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert config["OPTIONS"]["server_side_binding"] is True
    assert config["OPTIONS"]["options"] == "-c lock_timeout=1500"
    assert config["OPTIONS"]["pool"]["max_size"] == 10
    assert config["CONN_MAX_AGE"] == 0  # the pool keeps the connections


def test_server_side_binding_can_be_switched_off_and_a_wrong_value_is_refused(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgres://rc:secret@db.internal:5432/rc")
    monkeypatch.setenv("DB_SERVER_SIDE_BINDING", "0")
    assert settings_env.database(dict(DEFAULT))["OPTIONS"]["server_side_binding"] is False
    monkeypatch.setenv("DB_SERVER_SIDE_BINDING", "yes")
    with pytest.raises(settings_env.EnvironmentValueError, match="DB_SERVER_SIDE_BINDING is 'yes'"):
        settings_env.database(dict(DEFAULT))
    monkeypatch.setenv("DB_SERVER_SIDE_BINDING", "2")
    with pytest.raises(settings_env.EnvironmentValueError, match="DB_SERVER_SIDE_BINDING is 2: expected 1"):
        settings_env.database(dict(DEFAULT))
