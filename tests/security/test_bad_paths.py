"""Traversal in a static path and an overflowing admin filter answer 400/404, not 500 (issue 13)."""

from __future__ import annotations

import pytest
from channels.testing import HttpCommunicator

from reviewconsole.asgi import application
from reviewconsole.console.static_files import StaticFilesHandler


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "path", ["/static/..%2f..%2fvar%2fsecret_key", "/static/../../var/secret_key", "/static/%2e%2e/%2e%2e/manage.py"]
)
async def test_a_static_path_leaving_the_static_directories_is_refused(path):
    communicator = HttpCommunicator(StaticFilesHandler(application), "GET", path)
    response = await communicator.get_response(timeout=30)
    assert response["status"] in (400, 404)


@pytest.mark.parametrize(
    "url",
    [
        "/admin/audit/auditentry/?at__year=99999999999999999999",
        "/admin/workflow_sessions/workflowsession/?created_at__year=99999999999999999999",
    ],
)
def test_an_overflowing_admin_date_filter_is_a_400(client, personas, url):
    client.force_login(personas.admin)
    assert client.get(url).status_code in (400, 404)
