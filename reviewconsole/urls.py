"""URLs: the inbox, webhooks, the session JSON, login, the admin, and the favicon."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from .api.api import api
from .console import views as console_views
from .hooks import views as hook_views

urlpatterns = [
    path("", console_views.home, name="home"),
    path("favicon.ico", console_views.favicon, name="favicon"),
    path("inbox/", include("reviewconsole.inbox.urls")),
    path("hooks/<slug:slug>/", hook_views.receive, name="webhook"),
    path("agui/", include("reviewconsole.agui.urls")),
    path("api/v1/", api.urls),
    path("api/sessions/<str:session_id>/", console_views.session_json, name="session_json"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
]

# A database outage outside a view (e.g. loading the login session) is a 503, not a 500.
handler500 = "reviewconsole.console.unavailable.server_error"
