from django.urls import path

from .pages import feedback_views, item_views, lifecycle_views, views

app_name = "inbox"

urlpatterns = [
    path("", views.index, name="index"),
    path("items.json", views.items_json, name="items_json"),
    path("changes.json", views.changes_json, name="changes_json"),
    path("bulk/", views.bulk, name="bulk"),
    path("items/<int:pk>/", item_views.detail, name="detail"),
    path("items/<int:pk>/status.json", item_views.status_json, name="status_json"),
    path("items/<int:pk>/history/", item_views.history, name="history"),
    path("items/<int:pk>/decide/", item_views.decide, name="decide"),
    path("items/<int:pk>/after-feedback/", feedback_views.after_feedback, name="after_feedback"),
    path("items/<int:pk>/next.json", feedback_views.next_json, name="next_json"),
    path("items/<int:pk>/claim/", item_views.claim, name="claim"),
    path("items/<int:pk>/unclaim/", item_views.unclaim, name="unclaim"),
    path("items/<int:pk>/take-over/", item_views.take_over, name="take_over"),
    path("items/<int:pk>/reassign/", item_views.reassign, name="reassign"),
    path("items/<int:pk>/retry/", item_views.retry, name="retry"),
    path("items/<int:pk>/defer/", lifecycle_views.defer, name="defer"),
    path("items/<int:pk>/release/", lifecycle_views.release, name="release"),
    path("items/<int:pk>/escalate/", lifecycle_views.escalate, name="escalate"),
    path("items/<int:pk>/cancel/", lifecycle_views.cancel, name="cancel"),
    path("items/<int:pk>/comment/", lifecycle_views.comment, name="comment"),
]
