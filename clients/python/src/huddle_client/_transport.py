"""Sending a :class:`~huddle_client._ops.Call`: headers, retries of calls that are safe to
repeat, and turning error answers into typed exceptions."""

from __future__ import annotations

import json
import random
from typing import Any, Dict, Optional

import httpx

from ._ops import Call
from .errors import HuddleError, RateLimited, ServerError, TransportError, error_from_answer

#: Statuses after which a call that is safe to repeat is tried again.
RETRY_STATUSES = frozenset({429, 503})


def headers(token: str, extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    h = {"Authorization": f"Bearer {token}", "Accept": "application/json", "User-Agent": "huddle-client-python"}
    h.update(extra or {})
    return h


def request_args(call: Call[Any], token: str) -> Dict[str, Any]:
    h = headers(token, call.headers)
    args: Dict[str, Any] = {"params": call.params, "headers": h}
    if call.method in ("POST", "PUT", "PATCH"):
        h["Content-Type"] = call.content_type or "application/json"
        args["content"] = json.dumps(call.json if call.json is not None else {}).encode()
    return args


def read(call: Call[Any], response: httpx.Response) -> Any:
    """The call's result, or the typed error the answer carries."""
    if response.status_code >= 400:
        raise error_of(response)
    if response.status_code == 204 or not response.content:
        return call.parse(None)
    return call.parse(response.json())


def error_of(response: httpx.Response) -> HuddleError:
    try:
        body = response.json()
    except ValueError:
        body = None
    return error_from_answer(response.status_code, body, response.headers.get("retry-after"))


def backoff(attempt: int, error: Optional[HuddleError]) -> float:
    """Seconds before the next try: the daemon's ``Retry-After`` when it gave one, else an
    exponential delay with jitter (0.1 s, 0.2 s, 0.4 s… up to 5 s)."""
    if error is not None and error.retry_after is not None:
        return min(error.retry_after, 30.0)
    return min(5.0, 0.1 * 2**attempt) * (0.5 + random.random() / 2)


def should_retry(call: Call[Any], error: HuddleError, attempt: int, retries: int) -> bool:
    if attempt >= retries:
        return False
    if isinstance(error, TransportError):
        return call.retry
    return isinstance(error, (RateLimited, ServerError)) and error.status in RETRY_STATUSES


def transport_error(call: Call[Any], exc: httpx.HTTPError) -> TransportError:
    return TransportError(f"{call.method} {call.path}: {type(exc).__name__}: {exc}".rstrip(": "))


def timeouts(call: Call[Any], timeout: float) -> httpx.Timeout:
    """A long poll may wait its ``waitMs`` before answering: allow for it on top."""
    waited = 0.0
    if isinstance(call.json, dict) and isinstance(call.json.get("waitMs"), int):
        waited = call.json["waitMs"] / 1000
    if call.params and isinstance(call.params.get("waitMs"), int):
        waited = call.params["waitMs"] / 1000
    return httpx.Timeout(timeout + waited, connect=min(timeout, 10.0))
