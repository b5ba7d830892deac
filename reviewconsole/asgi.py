"""ASGI entry point: HTTP through Django, websockets through Channels (with session auth).

A review's long-poll (``GET /api/v1/reviews/{id}?wait=N``) is held by ``ReviewLongPoll`` outside
Django, which answers at once, so a waiter holds no thread (``reviewconsole/api/review_poll.py``).

Once the application is built, everything loaded so far (Django, the apps, the workflows: a few
hundred thousand objects that live as long as the process) is moved out of the cyclic garbage
collector's sight (``gc.freeze``). Each full collection walked all of them: 110–190 ms with the
loop stopped, every few seconds under load, so one live message in ten reached a thousand sockets
that much later (``bench/bench_fanout.py``; 20–75 ms after). ``serve`` freezes again once it has
set up, before it serves.
"""

import gc
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewconsole.settings.embedded")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from reviewconsole.api.review_poll import ReviewLongPoll  # noqa: E402
from reviewconsole.console import reason_phrases  # noqa: E402
from reviewconsole.routing import websocket_urlpatterns  # noqa: E402

reason_phrases.install()  # Daphne's status lines: "429 Too Many Requests", not "Unknown Status"

application = ProtocolTypeRouter(
    {
        "http": ReviewLongPoll(django_asgi_app),
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)

gc.freeze()  # see the module docstring
