from django.http import HttpRequest


def console(request: HttpRequest) -> dict[str, object]:
    """Values every page template may use."""
    return {"product_name": "reviewconsole"}
