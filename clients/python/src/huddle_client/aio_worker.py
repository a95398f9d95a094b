"""The worker loop for the asyncio client: :class:`~huddle_client.Worker`'s behaviour, awaited.

Claim the next task (long poll), keep its lease alive with heartbeats in a concurrent asyncio
task, await the handler, then complete or fail the task; stop gracefully on request. The
handler is ``async def handler(task, ctx)`` and its outcome decides what happens to the task:

- it returns a value → the task is completed with it as ``result``;
- it raises :class:`~huddle_client.Retry` → the task is failed without ``final``: with
  attempts left it returns to ``pending`` for another try (any other exception does the same,
  with the exception as the reason);
- it raises :class:`~huddle_client.FinalFailure` → the task is failed for good (``final``).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, List, Optional

from . import models as m
from ._work import WorkerStats, beat_interval, claim_backoff, count_failure, failure, report_backoff
from .aio import AsyncClient
from .errors import Conflict, HuddleError, NotFound, RateLimited, ServerError, TransportError

log = logging.getLogger("huddle_client.aio_worker")


@dataclass
class AsyncTaskContext:
    """What an async handler gets beside the task."""

    client: AsyncClient
    task: m.Task
    #: Set when a heartbeat found the task is no longer ours (lease expired, task cancelled).
    lease_lost: asyncio.Event = field(default_factory=asyncio.Event)
    #: Set when the worker was asked to stop; the handler may finish early.
    stopping: asyncio.Event = field(default_factory=asyncio.Event)


AsyncHandler = Callable[[m.Task, AsyncTaskContext], Awaitable[Any]]


class AsyncWorker:
    """Awaits ``handler`` on each task this agent may claim, until :meth:`stop`.

    ``project``: claim only tasks whose metadata ``project`` is that name, or that name none
    (``strict_project``: only that project's). ``wait``: seconds each claim long-polls (a stop takes effect within it: a claim in flight
    is never cut, so a task the daemon hands out is not left held); ``lease``: the lease asked
    for (the daemon's default when ``None``); heartbeats go out every third of it.
    """

    def __init__(
        self,
        client: AsyncClient,
        handler: AsyncHandler,
        *,
        prefixes: Optional[List[str]] = None,
        project: Optional[str] = None,
        strict_project: bool = False,
        wait: float = 5.0,
        lease: Optional[float] = None,
    ) -> None:
        self.client = client
        self.handler = handler
        self.prefixes = prefixes
        self.project = project
        self.strict_project = strict_project
        self.wait = wait
        self.lease = lease
        self.stats = WorkerStats()
        self._stop_requested = False
        self._stop: Optional[asyncio.Event] = None
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._beat_client: Optional[AsyncClient] = None

    def stop(self) -> None:
        """Claims nothing more; the task in hand finishes first. Safe from the worker's event
        loop, from another thread, and before :meth:`run` started."""
        self._stop_requested = True
        loop, stop = self._loop, self._stop
        if loop is None or stop is None:
            return
        if _running_loop() is loop:
            stop.set()
        elif not loop.is_closed():
            try:
                loop.call_soon_threadsafe(stop.set)
            except RuntimeError:  # the loop closed meanwhile: nothing left to stop
                pass

    async def run(self, *, handle_signals: bool = False) -> WorkerStats:
        """Works until :meth:`stop` (or SIGINT/SIGTERM with ``handle_signals``, on a loop in
        the main thread); returns what it did."""
        loop = asyncio.get_running_loop()
        self._loop, self._stop = loop, asyncio.Event()
        if self._stop_requested:
            self._stop.set()
        signals = []
        if handle_signals and threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, self.stop)
                signals.append(sig)
        # Heartbeats run on their own connection pool, beside the handler's calls.
        self._beat_client = self.client.with_token(self.client.token)
        log.info("worker started in team %s", self.client.team)
        try:
            away = 0
            while not self._stop.is_set():
                try:
                    task = await self.client.claim(
                        self.prefixes,
                        wait=self.wait,
                        lease=self.lease,
                        project=self.project,
                        strict_project=self.strict_project,
                    )
                except (TransportError, ServerError, RateLimited) as e:
                    # The daemon is away or busy: wait and try again rather than die.
                    away += 1
                    log.warning("claim failed (%s); retrying", e.message)
                    await self._pause(claim_backoff(away, e))
                    continue
                away = 0
                if task is not None:
                    await self._work(task)
        finally:
            for sig in signals:
                loop.remove_signal_handler(sig)
            await self._beat_client.close()
            self._beat_client = None
        log.info("worker stopped: %s", self.stats.summary())
        return self.stats

    async def _pause(self, seconds: float) -> None:
        """Sleeps ``seconds``, or less when a stop comes first."""
        assert self._stop is not None
        try:
            await asyncio.wait_for(self._stop.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    async def _work(self, task: m.Task) -> None:
        assert self._stop is not None
        log.info("claimed %s (attempt %d of %d): %s", task.id, task.attempts, task.max_attempts, task.subject)
        ctx = AsyncTaskContext(self.client, task, stopping=self._stop)
        beats = asyncio.ensure_future(self._heartbeat(task, ctx))
        try:
            try:
                outcome = await self._outcome(task, ctx)
            finally:
                beats.cancel()
                await asyncio.gather(beats, return_exceptions=True)
        except asyncio.CancelledError:
            # run() itself was cancelled mid-task: give the task back rather than leave it
            # held until its lease runs out.
            await self._release(task, "the worker was cancelled")
            raise
        try:
            await outcome()
        except (Conflict, NotFound) as e:
            self.stats.lost += 1
            log.warning("%s is no longer ours (%s): %s", task.id, e.code, e.message)
        except HuddleError as e:
            # The answer was refused (a result over the size limit…): give the task back now
            # rather than leave it held until its lease runs out.
            log.error("%s: could not report the outcome (%s): %s; releasing it", task.id, e.code, e.message)
            await self._release(task, f"the worker could not report: {e.message}")
            # Something is wrong beyond this task: do not claim again at once.
            await self._pause(report_backoff())

    async def _release(self, task: m.Task, note: str) -> None:
        try:
            await self.client.release(task.id, note)
        except HuddleError as e:
            log.error("%s: release failed too: %s", task.id, e.message)

    async def _outcome(self, task: m.Task, ctx: AsyncTaskContext) -> Callable[[], Awaitable[None]]:
        """Awaits the handler; returns the call that reports how it went."""
        try:
            result = await self.handler(task, ctx)
        except Exception as e:  # noqa: BLE001 - any handler error fails the task, retryable
            reason, final = failure(e)
            if not final:
                log.warning("%s: handler failed: %s", task.id, reason)
            return lambda: self._fail(task, reason, final=final)
        return lambda: self._complete(task, result)

    async def _complete(self, task: m.Task, result: Any) -> None:
        await self.client.complete(task.id, result)
        self.stats.completed += 1
        log.info("completed %s", task.id)

    async def _fail(self, task: m.Task, reason: str, *, final: bool) -> None:
        after = await self.client.fail(task.id, reason, final=final)
        count_failure(self.stats, after, reason, log)

    async def _heartbeat(self, task: m.Task, ctx: AsyncTaskContext) -> None:
        """Beats until cancelled (the handler is done) or the task is found no longer ours."""
        assert self._beat_client is not None
        every = beat_interval(self.lease, task)
        while True:
            await asyncio.sleep(every)
            try:
                await self._beat_client.heartbeat(task.id, lease=self.lease)
            except (Conflict, NotFound) as e:
                ctx.lease_lost.set()
                log.warning("%s: lease lost (%s)", task.id, e.code)
                return
            except HuddleError as e:
                # The daemon may be briefly away; the lease usually outlasts a few misses.
                log.warning("%s: heartbeat failed: %s", task.id, e.message)


def _running_loop() -> Optional[asyncio.AbstractEventLoop]:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
