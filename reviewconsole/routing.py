"""Channels' URL routing (as Channels documents it): the websocket URL patterns ``asgi.py`` routes.

Imported by ``reviewconsole.asgi`` after Django is set up (the consumers import models).
"""

from django.urls import path

from reviewconsole.inbox.live.consumers import InboxConsumer

websocket_urlpatterns = [path("ws/inbox/", InboxConsumer.as_asgi())]
