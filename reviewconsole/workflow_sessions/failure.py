"""What people are told about a failed session: a generic sentence, its error code and node, and
for a model failure the model code's own message; never the exception's text.

A failed session's ``error`` (``engine._root_run.finish_root``) is ``{"code", "message", "node_path"?,
"cause"?, "exception", …}``. Its ``message`` quotes the exception a node raised ("Node X failed:
<exception>"), which may hold anything a library put there (a URL with its key, a server's
body), so it stays in the database and the server log (the runner logs the failure with its
traceback) and is shown only by the admin to superusers. :func:`failure_message` is what the
inbox, the session pages, their JSON, the audit log and the admin show instead. A
:class:`engine.ModelError`'s message is built by the engine's model code from the failure's kind
and attempts (``engine/_model_retry.py``, ``engine/openai_model.py``), never from a server's body or
a key, so it is shown: it says what to fix.
"""

from __future__ import annotations

from typing import Any

__all__ = ["failure_code", "failure_message"]

_GENERIC = {
    "node_failed": "A step of the workflow raised an error",
    "node_timeout": "A step of the workflow ran longer than its time limit",
    "data_invalid": "A step's input, output or state did not fit its schema",
    "config_invalid": "The workflow is misconfigured",
    "session_stuck": "The session waited on requests that are neither pending nor answered",
    "version_mismatch": "The session's workflow version is no longer deployed",
    "model_error": "The model gave no usable answer",
}
_DEFAULT = "The session failed"


def _cause(error: dict[str, Any]) -> dict[str, Any]:
    cause = error.get("cause")
    return cause if isinstance(cause, dict) else error


def failure_code(error: Any) -> str:
    """The most specific error code of a failed session's ``error``: its cause's (e.g.
    ``model_error``, ``node_timeout``), else its own; ``"error"`` when there is none."""
    if not isinstance(error, dict):
        return "error"
    return str(_cause(error).get("code") or error.get("code") or "error")


def failure_message(error: Any) -> str:
    """What people are told of why the session failed, e.g. "A step of the workflow raised an error
    (node wf@1/write@1). Error code: node_failed. The details are in the server log.", or for a
    model failure "The model m gave no usable answer after 3 attempts: it timed out. (node …) Error
    code: model_error.". Never the exception's text; ``""`` for no error."""
    if not isinstance(error, dict) or not error:
        return ""
    code = failure_code(error)
    node = error.get("node_path")
    where = f" (node {node})" if isinstance(node, str) and node else ""
    if code == "model_error" and isinstance(_cause(error).get("message"), str):
        return f"{_cause(error)['message']}{where} Error code: {code}."
    return f"{_GENERIC.get(code, _DEFAULT)}{where}. Error code: {code}. The details are in the server log."
