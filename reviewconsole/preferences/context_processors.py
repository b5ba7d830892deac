from django.http import HttpRequest

from .services import shown


def preferences(request: HttpRequest) -> dict[str, object]:
    """``preferences``: the person's :class:`~.services.Shown` (theme, time zone), for ``base.html``."""
    return {"preferences": shown(request)}
