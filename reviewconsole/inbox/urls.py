from django.urls import path

from . import views

app_name = "inbox"

urlpatterns = [
    path("", views.index, name="index"),
    path("items.json", views.items_json, name="items_json"),
    path("items/<int:pk>/", views.detail, name="detail"),
    path("items/<int:pk>/decide/", views.decide, name="decide"),
]
