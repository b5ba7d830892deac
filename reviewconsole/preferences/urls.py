from django.urls import path

from . import views

urlpatterns = [
    path("", views.preferences_page, name="preferences"),
    path("time-zone/", views.time_zone_reported, name="preferences_time_zone"),
    path("theme/", views.theme, name="preferences_theme"),
]
