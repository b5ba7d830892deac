"""The Redis channel layer built from ``REDIS_URL`` (``settings.env.channel_layers``): its reads
outlast channels_redis's blocking pop, so an idle websocket does not fail every 5 s with redis-py 8
(django/channels_redis#422, found when the AG-UI progress test failed in CI)."""

from __future__ import annotations

import pytest
from channels_redis.core import RedisChannelLayer

from reviewconsole.settings import env


@pytest.fixture
def layer(monkeypatch):
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:6379/0")
    monkeypatch.delenv("REVIEWCONSOLE_CHANNELS_PREFIX", raising=False)
    config = env.channel_layers({})["default"]
    assert config["BACKEND"] == "channels_redis.core.RedisChannelLayer"
    return RedisChannelLayer(**config["CONFIG"])


def test_a_read_from_redis_outlasts_the_layers_blocking_pop(layer):
    pools = [layer.create_pool(index) for index in range(layer.ring_size)]
    assert pools, "the layer has no Redis host"
    for pool in pools:
        assert pool.connection_kwargs["socket_timeout"] > layer.brpop_timeout


def test_no_redis_url_keeps_the_given_layer(monkeypatch):
    monkeypatch.delenv("REDIS_URL", raising=False)
    default = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    assert env.channel_layers(default) is default
