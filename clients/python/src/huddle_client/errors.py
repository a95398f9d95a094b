"""The API's one error shape, ``{"error": {"code", "message", "details"}}``, as exceptions.

Every refusal raises a subclass of :class:`HuddleError` chosen by HTTP status, carrying the
machine-readable ``code`` (``not_holder``, ``stale_version``, ``dependency_cycle``…) and the
structured ``details`` (the offending field, the cycle, the current version…).
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Type


class HuddleError(Exception):
    """An answer from the daemon that is not a success."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: Optional[Dict[str, Any]] = None,
        retry_after: Optional[float] = None,
    ) -> None:
        # The message alone: the status is an attribute, not repeated in the text.
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details: Dict[str, Any] = details or {}
        #: Seconds the daemon asked to wait (``Retry-After``, 429 and 503).
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status}, code={self.code!r}, message={self.message!r})"


class BadRequest(HuddleError):
    """400: bad input; ``details["field"]`` names the field."""


class Unauthorized(HuddleError):
    """401: no token, or an unknown or revoked one."""


class Forbidden(HuddleError):
    """403: the caller's role may not do this."""


class NotFound(HuddleError):
    """404: no such team, task, agent or memory value (also another team's)."""


class Conflict(HuddleError):
    """409: duplicate, dependency cycle, a task not held by the caller or already closed."""


class StaleVersion(HuddleError):
    """412: ``If-Match`` named an older version; ``details["currentVersion"]`` is the current one."""


class TooLarge(HuddleError):
    """413: the body or a value is over its limit."""


class RateLimited(HuddleError):
    """429: too many requests or streams; ``retry_after`` says when to try again."""


class ServerError(HuddleError):
    """5xx: the daemon failed (500) or cannot take the request now (503)."""


class TransportError(HuddleError):
    """The daemon could not be reached, or the connection dropped before an answer."""

    def __init__(self, message: str) -> None:
        super().__init__(0, "transport", message)


_BY_STATUS: Dict[int, Type[HuddleError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    412: StaleVersion,
    413: TooLarge,
    429: RateLimited,
}


def error_from_answer(status: int, body: Any, retry_after: Optional[str]) -> HuddleError:
    """The exception for an error answer; a body outside the error shape keeps its status."""
    info = body.get("error") if isinstance(body, dict) else None
    if isinstance(info, dict):
        code = str(info.get("code", "unknown"))
        message = str(info.get("message", ""))
        details = info.get("details") if isinstance(info.get("details"), dict) else {}
    else:
        code, message, details = "unknown", f"unexpected answer with status {status}", {}
    cls = _BY_STATUS.get(status, ServerError if status >= 500 else HuddleError)
    wait: Optional[float] = None
    if retry_after is not None:
        try:
            wait = float(retry_after)
        except ValueError:
            wait = None
    return cls(status, code, message, details, wait)
