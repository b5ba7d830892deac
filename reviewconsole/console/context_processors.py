from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from ..inbox.items.selectors import managed_queues_for
from .starts import startable_specs


def console(request: HttpRequest) -> dict[str, object]:
    """Values every page template may use: the product's name, ``may_start_sessions`` (read only
    by a page that shows the "New request" link) and ``manages_queues`` (the nav's "Dashboard"
    link: one query, on the pages that show the nav to a logged-in user)."""

    def may_start() -> bool:
        return bool(startable_specs(request.user))

    def manages() -> bool:
        return managed_queues_for(request.user).exists()

    return {
        "product_name": "reviewconsole",
        "may_start_sessions": SimpleLazyObject(may_start),
        "manages_queues": SimpleLazyObject(manages),
    }
