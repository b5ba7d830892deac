"""``DATABASES["default"]`` from ``DATABASE_URL`` (``settings.env.database``): SQLite's embedded
default without it; on PostgreSQL a bounded lock wait and a connection pool, parameters bound on
the client (Django's default: psycopg's server-side binding cost the server more CPU per session,
bench/README.md)."""

from __future__ import annotations

from reviewconsole.settings import env as settings_env

DEFAULT = {"ENGINE": "django.db.backends.sqlite3", "NAME": "embedded.sqlite3"}


def test_without_database_url_the_default_stands(monkeypatch):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    assert settings_env.database(dict(DEFAULT)) == DEFAULT


def test_a_postgres_url_bounds_lock_waits_and_pools_connections(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgres://rc:secret@db.internal:5432/rc")
    monkeypatch.setenv("DB_LOCK_TIMEOUT_MS", "1500")
    monkeypatch.delenv("DB_POOL_MAX_SIZE", raising=False)
    config = settings_env.database(dict(DEFAULT))
    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert "server_side_binding" not in config["OPTIONS"]
    assert config["OPTIONS"]["options"] == "-c lock_timeout=1500"
    assert config["OPTIONS"]["pool"]["max_size"] == 10
    assert config["CONN_MAX_AGE"] == 0  # the pool keeps the connections
