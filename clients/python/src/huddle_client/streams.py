"""The team's Server-Sent Event streams (``/events`` and ``/messages/stream``) as iterators that
survive drops: each item's ``id`` is its sequence number, and after a dropped connection, a
daemon restart or an idle connection the iterator reconnects with ``Last-Event-ID`` set to the
last one it yielded, so nothing is lost or repeated. Refusals (401, 403, 404, 400) raise at
once; the daemon being away raises only after ``reconnect_for`` seconds without success."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable, Dict, Iterator, Optional, TypeVar

import httpx
from httpx_sse import ServerSentEvent, SSEError, aconnect_sse, connect_sse

from ._transport import RETRY_STATUSES, backoff, error_of, headers
from .errors import HuddleError, TransportError

T = TypeVar("T")


@dataclass
class StreamOptions:
    #: Start after this sequence number (0: from the team's first item).
    after: int = 0
    #: Give up (raise :class:`TransportError`) after this many seconds without reconnecting.
    reconnect_for: float = 300.0
    #: Reconnect when nothing, not even a keep-alive, arrived for this long. The daemon sends
    #: a keep-alive every 15 s by default.
    idle_timeout: float = 60.0


class _Stream:
    """The state shared by the sync and async loops: the cursor and the reconnect budget."""

    def __init__(self, url: str, token: str, params: Dict[str, Any], options: StreamOptions, parse: Callable[[Any], T]):
        self.url, self.token, self.params, self.parse = url, token, params, parse
        self.options = options
        self.cursor = options.after
        self.failures = 0
        self.failing_since: Optional[float] = None

    def request(self) -> Dict[str, Any]:
        h = headers(self.token, {"Last-Event-ID": str(self.cursor)})
        timeout = httpx.Timeout(10.0, read=self.options.idle_timeout)
        return {"params": self.params, "headers": h, "timeout": timeout}

    def item(self, sse: ServerSentEvent) -> Any:
        self.failures, self.failing_since = 0, None
        if sse.id:
            self.cursor = int(sse.id)
        return self.parse(json.loads(sse.data))

    def wait_before_retry(self, error: HuddleError) -> float:
        """Seconds to wait before reconnecting, or raises when the budget is spent or the
        error is a refusal that reconnecting cannot fix."""
        if not isinstance(error, TransportError) and error.status not in RETRY_STATUSES:
            raise error
        now = time.monotonic()
        if self.failing_since is None:
            self.failing_since = now
        if now - self.failing_since > self.options.reconnect_for:
            raise TransportError(f"stream lost for over {self.options.reconnect_for:.0f}s: {error.message}")
        self.failures += 1
        return backoff(min(self.failures, 6), error)


def follow(http: httpx.Client, stream: _Stream) -> Iterator[Any]:
    while True:
        try:
            with connect_sse(http, "GET", stream.url, **stream.request()) as source:
                if source.response.status_code >= 300:
                    source.response.read()
                    raise error_of(source.response)
                for sse in source.iter_sse():
                    if sse.data:
                        yield stream.item(sse)
            error: HuddleError = TransportError("the stream ended")
        except (httpx.TransportError, SSEError) as exc:
            error = TransportError(f"stream dropped: {type(exc).__name__}: {exc}")
        except HuddleError as exc:
            error = exc
        time.sleep(stream.wait_before_retry(error))


async def afollow(http: httpx.AsyncClient, stream: _Stream) -> AsyncIterator[Any]:
    while True:
        try:
            async with aconnect_sse(http, "GET", stream.url, **stream.request()) as source:
                if source.response.status_code >= 300:
                    await source.response.aread()
                    raise error_of(source.response)
                async for sse in source.aiter_sse():
                    if sse.data:
                        yield stream.item(sse)
            error: HuddleError = TransportError("the stream ended")
        except (httpx.TransportError, SSEError) as exc:
            error = TransportError(f"stream dropped: {type(exc).__name__}: {exc}")
        except HuddleError as exc:
            error = exc
        await asyncio.sleep(stream.wait_before_retry(error))

