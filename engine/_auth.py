"""Nodes that need a credential: ``@node(auth_config=...)`` and ADK's ``adk_request_credential``.

ADK 2.13 (``workflow/utils/_workflow_hitl_utils.py``, ``auth/auth_tool.py``): before a node with an
``auth_config`` runs, and while no credential for its ``credential_key`` is in state, the workflow
pauses on the interrupt ``wf_auth:<node path>``: a model event with one ``adk_request_credential``
call whose args are ``{"functionCallId": <interrupt id>, "authConfig": <the config, camelCase>,
"message": "Please provide your API key for <name>."}``. The answer (a plain API key, an
``AuthCredential`` dict, or a whole ``AuthConfig`` dict carrying ``exchangedAuthCredential``) reruns
the node, which reads it with ``ctx.get_auth_response(auth_config)``.

Unlike ADK, the credential is not written to session state (not even under ``temp:``): it stays in
the node's checkpoint until the node completes, so it never reaches an event's ``stateDelta``.
"""

from __future__ import annotations

from typing import Any

from ._events import _Model

__all__ = ["AUTH_FUNCTION", "AuthConfig", "AuthCredential", "auth_interrupt_id", "auth_message", "credential_from"]

AUTH_FUNCTION = "adk_request_credential"
"""Function-call name of a credential request (ADK's ``REQUEST_EUC_FUNCTION_CALL_NAME``)."""


class AuthCredential(_Model):
    """A credential (ADK ``auth/auth_credential.py``): ``auth_type`` is ``apiKey``, ``http``,
    ``oauth2``, ``openIdConnect`` or ``serviceAccount``; ``api_key`` for API keys; the other
    schemes' details as JSON objects."""

    auth_type: str
    api_key: str | None = None
    http: dict[str, Any] | None = None
    oauth2: dict[str, Any] | None = None
    service_account: dict[str, Any] | None = None


class AuthConfig(_Model):
    """What a node needs (ADK ``auth/auth_tool.py``): ``auth_scheme`` (an OpenAPI security scheme as
    JSON, e.g. ``{"type": "apiKey", "in": "header", "name": "X-Api-Key"}``), an optional
    ``raw_auth_credential`` and the ``credential_key`` the credential is known by."""

    auth_scheme: dict[str, Any]
    raw_auth_credential: AuthCredential | None = None
    credential_key: str

    def to_wire(self) -> dict[str, Any]:
        """The config as ADK writes it in the request's args (camelCase, no nulls), without the
        raw credential's OAuth client secret (an event is no place for a secret)."""
        data = self.model_dump(by_alias=True, exclude_none=True, mode="json")
        oauth = data.get("rawAuthCredential", {}).get("oauth2")
        if isinstance(oauth, dict):
            for key in ("clientSecret", "client_secret"):
                oauth.pop(key, None)
        return data


def auth_interrupt_id(node_path: str) -> str:
    """The interrupt id of a node's credential request (ADK ``auth_interrupt_id``)."""
    return f"wf_auth:{node_path}"


def auth_message(config: AuthConfig) -> str:
    """The request's human-readable message, in ADK's words."""
    raw = config.raw_auth_credential
    if raw is None:
        return "Please provide your authentication credentials."
    if raw.auth_type == "apiKey":
        return f"Please provide your API key for {config.auth_scheme.get('name', 'API key')}."
    if raw.auth_type in ("oauth2", "openIdConnect"):
        return "Please complete the authentication flow."
    return "Please provide your authentication credentials."


def credential_from(answer: Any, config: AuthConfig) -> AuthCredential:
    """The credential in an answer: a plain value (read as the raw credential's type, an API key
    by default), an ``AuthCredential`` dict, or an ``AuthConfig`` dict with ``exchangedAuthCredential``."""
    if isinstance(answer, dict):
        inner = answer.get("exchangedAuthCredential") or answer.get("exchanged_auth_credential") or answer
        if isinstance(inner, dict) and ("authType" in inner or "auth_type" in inner):
            return AuthCredential.model_validate(inner)
    kind = config.raw_auth_credential.auth_type if config.raw_auth_credential else "apiKey"
    return AuthCredential(auth_type=kind, api_key=str(answer))
