"""URLs: the inbox, New request, the managers' dashboard, webhooks, the session JSON, login,
preferences, the admin, and the favicon."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path

from .api.api import api
from .api.errors import unknown_path
from .console import start_views
from .console import views as console_views
from .console.dashboard import views as dashboard_views
from .hooks import views as hook_views

urlpatterns = [
    path("", console_views.home, name="home"),
    path("favicon.ico", console_views.favicon, name="favicon"),
    path("inbox/", include("reviewconsole.inbox.urls")),
    path("new/", start_views.new_request, name="new_request"),
    path("new/<slug:workflow>/", start_views.new_request_form, name="new_request_form"),
    path("dashboard/", dashboard_views.dashboard, name="dashboard"),
    path("dashboard/panel/", dashboard_views.dashboard_panel, name="dashboard_panel"),
    path("dashboard/figures.json", dashboard_views.dashboard_json, name="dashboard_json"),
    path("sessions/<str:session_id>/", start_views.session_follow, name="session_follow"),
    path("sessions/<str:session_id>/status.json", start_views.session_status_json, name="session_status_json"),
    path("sessions/<str:session_id>/retry/", start_views.session_retry_view, name="session_retry"),
    path("hooks/<slug:slug>/", hook_views.receive, name="webhook"),
    path("agui/", include("reviewconsole.agui.urls")),
    # The API's root (django-ninja's own answers HTML 404 unless DEBUG), its operations, then a
    # JSON 404 for every path it does not have.
    path("api/v1/", unknown_path, {"path": ""}),
    path("api/v1/", api.urls),
    re_path(r"^api/v1/(?P<path>.*)$", unknown_path),
    path("api/sessions/<str:session_id>/", console_views.session_json, name="session_json"),
    path("preferences/", include("reviewconsole.preferences.urls")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
]

# The site's error pages, and JSON for the JSON doors (error_pages.py). A database outage outside
# a view (e.g. loading the login session) is a 503, not a 500.
handler400 = "reviewconsole.error_pages.bad_request"
handler403 = "reviewconsole.error_pages.permission_denied"
handler404 = "reviewconsole.error_pages.page_not_found"
handler500 = "reviewconsole.unavailable.server_error"
