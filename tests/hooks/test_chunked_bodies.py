"""Bodies over the limit without a ``Content-Length`` (chunked) get the documented JSON 413 from
the webhook and AG-UI doors, not Django's HTML 400 (issue 13)."""

from __future__ import annotations

import json

import pytest
from channels.testing import HttpCommunicator

from reviewconsole.asgi import application

pytestmark = pytest.mark.django_db(transaction=True)

BIG = b'{"complaint": "' + b"x" * (3 * 1024 * 1024) + b'"}'  # over DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MiB)


async def _post(path, headers):
    base = [(b"host", b"testserver"), (b"content-type", b"application/json")]
    communicator = HttpCommunicator(application, "POST", path, body=BIG, headers=base + headers)
    return await communicator.get_response(timeout=60)


async def test_a_chunked_webhook_body_over_the_limit_is_a_json_413(demo_tx):
    response = await _post("/hooks/email-review/", [])  # no content-length: chunked
    assert response["status"] == 413
    assert json.loads(response["body"])["error"]["code"] == "body_too_large"


async def test_a_chunked_agui_body_over_the_limit_is_a_json_413(demo_tx):
    from reviewconsole.api.models import ApiClient

    token = ApiClient.new_token()
    client = ApiClient(name="chunked", workflows=["*"])
    client.set_token(token)
    await client.asave()
    response = await _post("/agui/email-review/", [(b"authorization", f"Bearer {token}".encode())])
    assert response["status"] == 413
    assert json.loads(response["body"])["error"]["code"] == "body_too_large"
