"""``POST /agui/<workflow>/``: the AG-UI door (AG-UI 1.0 §Transport: a RunAgentInput in, SSE out)."""

from __future__ import annotations

import json

from ag_ui.core import RunAgentInput
from asgiref.sync import sync_to_async
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponseBase, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from pydantic import ValidationError

from ..api.auth import client_for_request, refusal_message
from ..json_errors import error_response
from ..workflows import UnknownWorkflowError, get
from .runs import stream_run

MAX_BODY_BYTES = 1024 * 1024


@csrf_exempt  # authenticated by an API token in the Authorization header; no browser session is involved
@require_POST
async def run(request: HttpRequest, workflow: str) -> HttpResponseBase:
    """Run ``workflow`` for the token's client; answers ``text/event-stream`` (see :mod:`.runs`).

    Refused before any event, as JSON: 401 missing or unknown token, 404 unknown workflow, 403
    token not scoped to the workflow, 413 ``body_too_large`` body over 1 MiB (with or without a
    ``Content-Length``: chunked bodies too), 400 body not a RunAgentInput (also one
    nested too deeply to parse). Every later refusal is a RUN_ERROR event in the stream
    (:mod:`.errors`).
    """
    client = await sync_to_async(client_for_request)(request)
    if client is None:
        return error_response(401, "unauthorized", refusal_message(request))
    try:
        spec = get(workflow)
    except UnknownWorkflowError:
        return error_response(404, "unknown_workflow", "No such workflow.")
    if spec.builtin:  # the review request: asked through POST /api/v1/reviews only
        return error_response(404, "unknown_workflow", "No such workflow.")
    if not client.may_use(spec.name):
        return error_response(403, "forbidden", "This token may not run this workflow.")
    try:  # Django refuses a body over DATA_UPLOAD_MAX_MEMORY_SIZE as it reads it (also a chunked one)
        raw = request.body
    except RequestDataTooBig:
        raw = None
    if raw is None or len(raw) > MAX_BODY_BYTES:
        return error_response(413, "body_too_large", "The body exceeds 1 MiB.")
    try:
        body = json.loads(raw)
        run_input = RunAgentInput.model_validate(body)
    except RecursionError:  # json.loads of nesting deeper than the interpreter's recursion limit
        return error_response(400, "invalid_input", "The body is nested too deeply to be an AG-UI RunAgentInput.")
    except (ValueError, ValidationError):
        return error_response(400, "invalid_input", "The body is not an AG-UI RunAgentInput.")
    response = StreamingHttpResponse(
        stream_run(client=client, spec=spec, run=run_input), content_type="text/event-stream"
    )
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response
