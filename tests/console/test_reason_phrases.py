"""Status lines under Daphne: Twisted writes them, and 422 and 429 get their reason phrases
(they went out as "Unknown Status")."""

from __future__ import annotations

import pytest
from twisted.internet.testing import StringTransport
from twisted.web import http


class _Answer(http.Request):
    """Answers ``GET /<status>`` with that status, setting only the code (as Daphne does)."""

    def process(self) -> None:
        self.setResponseCode(int(self.path.strip(b"/")))
        self.finish()


def _status_line(code: int) -> bytes:
    channel = http.HTTPChannel()
    channel.requestFactory = _Answer
    transport = StringTransport()
    channel.makeConnection(transport)
    channel.dataReceived(f"GET /{code} HTTP/1.1\r\nHost: console\r\n\r\n".encode())
    line = transport.value().split(b"\r\n", 1)[0]
    channel.connectionLost(None)
    return line


@pytest.mark.parametrize(
    ("code", "phrase"),
    [(422, (b"Unprocessable Entity", b"Unprocessable Content")), (429, (b"Too Many Requests",)), (409, (b"Conflict",))],
)
def test_the_asgi_application_gives_daphne_reason_phrases(code, phrase):
    import reviewconsole.asgi  # noqa: F401  (what daphne and manage.py serve load)

    assert _status_line(code) in {b"HTTP/1.1 %d %s" % (code, p) for p in phrase}
