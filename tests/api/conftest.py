"""API fixtures: a client with a token scoped to every workflow, and helpers to call the API."""

from __future__ import annotations

import json

import pytest

from reviewconsole.api.models import ApiClient


def make_api_client(name="partner", workflows=("*",)):
    """An :class:`ApiClient` and its plain token (shown once, stored hashed)."""
    token = ApiClient.new_token()
    client = ApiClient(name=name, workflows=list(workflows))
    client.set_token(token)
    client.save()
    return client, token


@pytest.fixture
def api_client(demo):
    return make_api_client()


@pytest.fixture
def token(api_client):
    return api_client[1]


def auth(token, key=None):
    headers = {"Authorization": f"Bearer {token}"}
    if key is not None:
        headers["Idempotency-Key"] = key
    return headers


def post(client, path, body, token, key=None):
    return client.post(path, json.dumps(body), content_type="application/json", headers=auth(token, key))


REFUND = {"order_id": "A-1001", "amount": 250.0, "reason": "Arrived broken"}
