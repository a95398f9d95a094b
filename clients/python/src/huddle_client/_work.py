"""What :class:`~huddle_client.Worker` and :class:`~huddle_client.AsyncWorker` share: the
handler's exceptions, the stats, and the pure decisions (how a handler error fails a task, how
long to back off, how often to beat, how a failure is counted). No I/O here."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Optional, Tuple

from . import models as m
from ._transport import backoff
from .errors import HuddleError


class Retry(Exception):
    """Raise from a handler to give the task back for another attempt (while attempts remain)."""


class FinalFailure(Exception):
    """Raise from a handler to fail the task for good."""


@dataclass
class WorkerStats:
    completed: int = 0
    #: Failed for good (``final``, or the daemon said no attempts remain).
    failed: int = 0
    #: Failed with attempts left: back in the queue.
    retried: int = 0
    #: Lost to an expired lease before the answer could be given.
    lost: int = 0

    def summary(self) -> str:
        return f"{self.completed} completed, {self.failed} failed, {self.retried} retried, {self.lost} lost"


def failure(error: Exception) -> Tuple[str, bool]:
    """The ``(reason, final)`` a handler's exception fails its task with: :class:`FinalFailure`
    for good, :class:`Retry` or any other exception with attempts left."""
    if isinstance(error, FinalFailure):
        return str(error) or "failed", True
    if isinstance(error, Retry):
        return str(error) or "retry", False
    return f"{type(error).__name__}: {error}", False


def claim_backoff(away: int, error: Optional[HuddleError]) -> float:
    """Seconds to wait after the ``away``-th claim in a row that found the daemon away or busy."""
    return backoff(min(away, 6), error)


def report_backoff() -> float:
    """Seconds to wait before claiming again after an outcome could not be reported."""
    return backoff(4, None)


def beat_interval(lease: Optional[float], task: m.Task) -> float:
    """Heartbeats go out every third of the lease: the one asked for, else what the claim got."""
    if lease is not None:
        return max(lease / 3, 0.05)
    if task.lease_expires_at:
        expires = datetime.fromisoformat(task.lease_expires_at.replace("Z", "+00:00"))
        left = (expires - datetime.now(timezone.utc)).total_seconds()
        return max(left / 3, 0.05)
    return 10.0


def count_failure(stats: WorkerStats, after: m.Task, reason: str, log: logging.Logger) -> None:
    """Counts a failure the daemon accepted: back in the queue, or failed for good."""
    if after.status == m.PENDING:
        stats.retried += 1
        log.info("%s back in the queue (attempt %d of %d used): %s", after.id, after.attempts, after.max_attempts, reason)
    else:
        stats.failed += 1
        log.info("failed %s: %s", after.id, reason)
