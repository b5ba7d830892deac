"""AG-UI run progress over Redis (channels_redis, as on the scale-out stack): what a worker
thread's run reports reaches the stream's subscription in order, through the sender thread."""

from __future__ import annotations

import asyncio
import os

import pytest

from reviewconsole.settings.env import channel_layers
from tests.scaleout.conftest import _missing

pytestmark = pytest.mark.scaleout


@pytest.fixture
def redis_layer(settings):
    url = os.environ.get("REDIS_URL")
    if not url:
        _missing("REDIS_URL names no Redis server")
    settings.CHANNEL_LAYERS = channel_layers({})  # the production settings' layer on REDIS_URL


async def test_a_runs_progress_arrives_in_order_over_redis(redis_layer):
    from channels.layers import get_channel_layer
    from channels_redis.core import RedisChannelLayer

    from reviewconsole.agui.progress import Progress, ProgressListener

    assert isinstance(get_channel_layer(), RedisChannelLayer)

    def run():  # on a thread of its own, as a worker's run is
        listener = ProgressListener("s-redis")
        for n in range(200):
            listener.on_node_start(f"wf@1/step@{n}", "step")
        listener.on_run_end("completed")

    async with Progress("s-redis") as progress:
        await asyncio.to_thread(run)
        items = []
        while not items or items[-1]["kind"] != "run_end":
            message = await progress.receive(10.0)
            assert message is not None, f"the progress stopped after {len(items)} items"
            items += message["items"]

    assert [item["path"] for item in items[:-1]] == [f"wf@1/step@{n}" for n in range(200)]
    assert items[-1] == {"kind": "run_end", "status": "completed"}
