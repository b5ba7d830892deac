"""What a review request must be before anything is stored (``reviews.review_ask``, docs/reviews.md).

Each check raises the API's refusal: the response schema against its metaschema (``jsonschema``)
with references only to its own parts (the console never fetches a schema; a dangling one
would fail only when the reviewer answers), and one the inbox can draw as a form and take the
answer of (``schema_shape.check_drawable``: no ``$ref`` that refers to itself, no more fields than
a post may carry), the queue (the token's scope first, so a queue outside
it is 403 whether it exists or not), the kind, and the callback's address (``outbound.addresses``).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

import jsonschema
from django.conf import settings

from ..inbox.models import Queue
from ..inbox.pages.schema_shape import FormSchemaError, check_drawable, field_limit
from ..outbound.addresses import PrivateAddressError, check_destination
from .errors import ApiError
from .models import ApiClient

__all__ = ["check_callback", "check_kind", "check_queue", "check_schema"]


def check_schema(schema: Any) -> None:
    """Raise 400 ``schema_invalid`` naming the problem and where (``errors: [{"path", "message"}]``)
    unless ``schema`` is a valid JSON Schema whose references name its own parts and from which
    a form can be drawn."""
    if not isinstance(schema, dict):
        raise ApiError(400, "schema_invalid", "response_schema must be a JSON Schema object.")
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        path = [str(p) for p in exc.absolute_path]
        where = "/".join(path) or "(root)"
        raise ApiError(
            400,
            "schema_invalid",
            f"response_schema is not a valid JSON Schema at {where}: {exc.message}"[:500],
            errors=[{"path": path, "message": exc.message[:500]}],
        ) from None
    remote = _bad_ref(schema, schema, [])
    if remote is not None:  # the console never fetches a schema from elsewhere
        message = "a $ref must name a part of this schema (#/…)"
        raise ApiError(
            400,
            "schema_invalid",
            f"response_schema is not usable at {'/'.join(remote)}: {message}.",
            errors=[{"path": remote, "message": message}],
        )
    try:
        check_drawable(schema, field_limit())
    except FormSchemaError as exc:  # the inbox could not draw its form, or take its answer
        raise ApiError(
            400,
            "schema_invalid",
            f"response_schema is not usable at {exc.where}: {exc.message}.",
            errors=[{"path": exc.path, "message": exc.message}],
        ) from None


def _points(root: Any, ref: str) -> bool:
    """Whether the local reference ``ref`` (``#``, ``#/a/b``) names a part of ``root``."""
    if ref == "#":
        return True
    if not ref.startswith("#/"):
        return False
    node = root
    for raw in ref[2:].split("/"):
        key = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return False
    return True


def _bad_ref(schema: Any, root: Any, path: list[str]) -> list[str] | None:
    """The path of the first ``$ref`` that does not name a part of the schema itself, or None."""
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if ref is not None and (not isinstance(ref, str) or not _points(root, ref)):
            return [*path, "$ref"]
        items: Any = schema.items()
    elif isinstance(schema, list):
        items = ((str(n), v) for n, v in enumerate(schema))
    else:
        return None
    for key, value in items:
        found = _bad_ref(value, root, [*path, str(key)])
        if found is not None:
            return found
    return None


def check_queue(client: ApiClient, slug: str) -> None:
    if not client.may_ask(slug):
        raise ApiError(403, "queue_forbidden", "This token may not ask reviews in that queue.", queue=slug)
    if not Queue.objects.filter(slug=slug).exists():
        raise ApiError(400, "queue_unknown", "No queue has that name.", queue=slug)


def check_callback(url: str) -> None:
    allow_private = bool(settings.REVIEWCONSOLE.get("OUTBOUND_ALLOW_PRIVATE"))
    if urlsplit(url).scheme != "https" and not allow_private:
        raise ApiError(400, "callback_invalid", "callback_url must be an https URL.")
    try:
        check_destination(url)
    except PrivateAddressError as exc:
        raise ApiError(400, "callback_invalid", str(exc)) from None


def check_kind(body: dict[str, Any]) -> str:
    """The review's kind (default ``form`` with a ``response_schema``, else ``confirm``), after
    refusing fields that do not go with it or each other (400; nothing would use them)."""
    kind = body.get("kind") or ("form" if body.get("response_schema") is not None else "confirm")
    if kind == "form" and body.get("response_schema") is None:
        raise ApiError(400, "schema_invalid", 'kind "form" needs a response_schema.')
    if kind != "form" and body.get("response_schema") is not None:
        raise ApiError(400, "invalid_request", f'response_schema is used by kind "form" only, not "{kind}".')
    if body.get("on_expiry") and not body.get("due_in_seconds"):
        raise ApiError(400, "invalid_request", "on_expiry needs due_in_seconds: when the review is due.")
    if kind == "draft":
        payload = body.get("payload")
        if not isinstance(payload, dict) or not isinstance(payload.get("draft"), str):
            raise ApiError(400, "invalid_request", 'kind "draft" needs a payload {"draft": "<text>"}.')
    return str(kind)
