from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from .starts import startable_specs


def console(request: HttpRequest) -> dict[str, object]:
    """Values every page template may use: the product's name, and ``may_start_sessions`` (read
    only by a page that shows the "New request" link)."""

    def may_start() -> bool:
        return bool(startable_specs(request.user))

    return {"product_name": "reviewconsole", "may_start_sessions": SimpleLazyObject(may_start)}
