from django.urls import path

from . import views

app_name = "agui"
urlpatterns = [path("<slug:workflow>/", views.run, name="run")]
