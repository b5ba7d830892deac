"""reviewconsole-client: ask people through a reviewconsole inbox from any Python agent.

``Client`` / ``AsyncClient`` file review requests (``ask``), read them (``get``), wait for their
decision (``wait``) and cancel them (``cancel``); ``verify_webhook`` checks and parses the signed
``review.decided`` event; ``outcome`` turns a finished review into what an agent resumes with.
The adapters live in ``reviewconsole_client.adk`` (extra ``adk``),
``reviewconsole_client.langgraph`` (extra ``langgraph``) and ``reviewconsole_client.openai_agents``
(extra ``openai-agents``).
"""

from .aio import AsyncClient
from .client import Client
from .errors import (
    ApiError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    ConsoleUnavailableError,
    ForbiddenError,
    NotFoundError,
    RateLimitedError,
    ReviewConsoleError,
    ReviewTimeoutError,
    ServerError,
    WebhookVerificationError,
)
from .reviews import FINAL_STATUSES, Cancellation, Decision, Review, outcome
from .webhooks import WebhookEvent, verify_webhook

__all__ = [
    "FINAL_STATUSES",
    "ApiError",
    "AsyncClient",
    "AuthenticationError",
    "BadRequestError",
    "Cancellation",
    "Client",
    "ConflictError",
    "ConsoleUnavailableError",
    "Decision",
    "ForbiddenError",
    "NotFoundError",
    "RateLimitedError",
    "Review",
    "ReviewConsoleError",
    "ReviewTimeoutError",
    "ServerError",
    "WebhookEvent",
    "WebhookVerificationError",
    "outcome",
    "verify_webhook",
]
