"""A worker loop: claim the next task (long poll), keep its lease alive with heartbeats in the
background, run the handler, then complete or fail the task; stop gracefully on request.

The handler's outcome decides what happens to the task:

- it returns a value → the task is completed with it as ``result``;
- it raises :class:`Retry` → the task is failed without ``final``: with attempts left it
  returns to ``pending`` for another try (any other exception does the same, with the
  exception as the reason);
- it raises :class:`FinalFailure` → the task is failed for good (``final``), and tasks blocked
  by it never become ready.
"""

from __future__ import annotations

import logging
import signal
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional

from . import models as m
from ._work import FinalFailure, Retry, WorkerStats, beat_interval, claim_backoff, count_failure, failure, report_backoff
from .client import Client
from .errors import Conflict, HuddleError, NotFound, RateLimited, ServerError, TransportError

__all__ = ["FinalFailure", "Handler", "Retry", "TaskContext", "Worker", "WorkerStats"]

log = logging.getLogger("huddle_client.worker")


@dataclass
class TaskContext:
    """What a handler gets beside the task."""

    client: Client
    task: m.Task
    #: Set when a heartbeat found the task is no longer ours (lease expired, task cancelled).
    lease_lost: threading.Event = field(default_factory=threading.Event)
    #: Set when the worker was asked to stop; the handler may finish early.
    stopping: threading.Event = field(default_factory=threading.Event)


Handler = Callable[[m.Task, TaskContext], Any]


class Worker:
    """Runs ``handler`` on each task this agent may claim, until :meth:`stop`.

    ``project``: claim only tasks whose metadata ``project`` is that name, or that name none
    (``strict_project``: only that project's). ``wait``: seconds each claim long-polls (a stop takes effect within it); ``lease``: the
    lease asked for (the daemon's default when ``None``); heartbeats go out every third of it.
    """

    def __init__(
        self,
        client: Client,
        handler: Handler,
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
        self._stop = threading.Event()
        # Heartbeats run on their own connection pool, beside the handler's calls.
        self._beat_client = client.with_token(client.token)

    def stop(self) -> None:
        """Claims nothing more; the task in hand finishes first."""
        self._stop.set()

    def run(self, *, handle_signals: bool = False) -> WorkerStats:
        """Works until :meth:`stop` (or SIGINT/SIGTERM with ``handle_signals``, from the main
        thread); returns what it did."""
        if handle_signals:
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, lambda *_: self.stop())
        log.info("worker started in team %s", self.client.team)
        away = 0
        while not self._stop.is_set():
            try:
                task = self.client.claim(
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
                self._stop.wait(claim_backoff(away, e))
                continue
            away = 0
            if task is not None:
                self._work(task)
        log.info("worker stopped: %s", self.stats.summary())
        return self.stats

    def _work(self, task: m.Task) -> None:
        log.info("claimed %s (attempt %d of %d): %s", task.id, task.attempts, task.max_attempts, task.subject)
        ctx = TaskContext(self.client, task, stopping=self._stop)
        done = threading.Event()
        beats = threading.Thread(target=self._heartbeat, args=(task, ctx, done), daemon=True)
        beats.start()
        try:
            outcome = self._outcome(task, ctx)
        finally:
            done.set()
            beats.join()
        try:
            outcome()
        except (Conflict, NotFound) as e:
            self.stats.lost += 1
            log.warning("%s is no longer ours (%s): %s", task.id, e.code, e.message)
        except HuddleError as e:
            # The answer was refused (a result over the size limit…): give the task back now
            # rather than leave it held until its lease runs out.
            log.error("%s: could not report the outcome (%s): %s; releasing it", task.id, e.code, e.message)
            try:
                self.client.release(task.id, f"the worker could not report: {e.message}")
            except HuddleError as again:
                log.error("%s: release failed too: %s", task.id, again.message)
            # Something is wrong beyond this task: do not claim again at once.
            self._stop.wait(report_backoff())

    def _outcome(self, task: m.Task, ctx: TaskContext) -> Callable[[], None]:
        """Runs the handler; returns the call that reports how it went."""
        try:
            result = self.handler(task, ctx)
        except Exception as e:  # noqa: BLE001 - any handler error fails the task, retryable
            reason, final = failure(e)
            if not final:
                log.warning("%s: handler failed: %s", task.id, reason)
            return lambda: self._fail(task, reason, final=final)
        return lambda: self._complete(task, result)

    def _complete(self, task: m.Task, result: Any) -> None:
        self.client.complete(task.id, result)
        self.stats.completed += 1
        log.info("completed %s", task.id)

    def _fail(self, task: m.Task, reason: str, *, final: bool) -> None:
        after = self.client.fail(task.id, reason, final=final)
        count_failure(self.stats, after, reason, log)

    def _heartbeat(self, task: m.Task, ctx: TaskContext, done: threading.Event) -> None:
        every = beat_interval(self.lease, task)
        while not done.wait(every):
            try:
                self._beat_client.heartbeat(task.id, lease=self.lease)
            except (Conflict, NotFound) as e:
                ctx.lease_lost.set()
                log.warning("%s: lease lost (%s)", task.id, e.code)
                return
            except HuddleError as e:
                # The daemon may be briefly away; the lease usually outlasts a few misses.
                log.warning("%s: heartbeat failed: %s", task.id, e.message)
